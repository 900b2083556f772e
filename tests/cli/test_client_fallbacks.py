"""The client paths a 2026-07-28 server never exercises, against a server that speaks only 2025-11-25.

The peer is a small stdio script (a legacy-only server: no `server/discover`, the `initialize`
handshake, server-to-client requests). It logs every message it reads, so the tests check the
wire: which probes the client sent, with which version and id, and what it answered.
Only public entry points: `rondo.Client` with a command as its target.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rondo import Client
from rondo.client import ClientError, ElicitRequest, SampleRequest
from rondo.wire.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND

pytestmark = pytest.mark.slow

LEGACY_ONLY = '''
import json, sys
mode, log_path = sys.argv[1], sys.argv[2]
log = open(log_path, "a")
probes = 0

def send(obj):
    sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()

def read():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    log.write(line.rstrip("\\n") + "\\n"); log.flush()
    return json.loads(line)

def error(rid, code, message, data=None):
    body = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    send({"jsonrpc": "2.0", "id": rid, "error": body})

def unsupported(rid, supported):
    error(rid, -32022, "Unsupported protocol version",
          {"supported": supported, "requested": "2026-07-28"})

def text(rid, value):
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": value}]}})

# Requests this server sends the client during `ask_client` (the 2025-11-25 back-channel).
ASKS = {
    "ping": {"method": "ping"},
    "unknown": {"method": "bogus/method", "params": {}},
    "no-handler": {"method": "roots/list", "params": {}},
    "bad-answer": {"method": "elicitation/create", "params": {"message": "bad", "requestedSchema": {
        "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}},
    "raises": {"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}},
    "good": {"method": "elicitation/create", "params": {"message": "good", "requestedSchema": {
        "type": "object", "properties": {"n": {"type": "integer", "default": 7}}, "required": ["n"]}}},
    "url-undeclared": {"method": "elicitation/create", "params": {"mode": "url", "message": "go",
        "url": "https://example.com/x", "elicitationId": "e1"}},
    "voice": {"method": "elicitation/create", "params": {"mode": "voice", "message": "say it"}},
    "sampling-tools": {"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5,
        "tools": [{"name": "t", "inputSchema": {"type": "object"}}]}},
    "roots-struct": {"method": "roots/list"},
}
ONLY = json.loads(sys.argv[3]) if len(sys.argv) > 3 else None
if ONLY is not None:
    ASKS = {k: v for k, v in ASKS.items() if k in ONLY}

while True:
    msg = read()
    rid, method = msg.get("id"), msg.get("method")
    if rid is None:
        continue
    if method == "server/discover":
        probes += 1
        if mode == "method-not-found":
            error(rid, -32601, "Method not found: server/discover")
        elif mode == "legacy-listed":
            unsupported(rid, ["2025-11-25"])
        elif mode == "refuses-its-own":
            unsupported(rid, ["2026-07-28"])  # lists the version, refuses it anyway
        elif mode == "future-only":
            unsupported(rid, ["2099-01-01"])
        elif mode == "older-modern" and msg["params"]["_meta"][
                "io.modelcontextprotocol/protocolVersion"] != "2026-07-28":
            unsupported(rid, ["2026-07-28", "2025-11-25"])
        elif mode == "older-modern":
            send({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete",
                  "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "older-modern", "version": "1"}}})
        # "silent": no answer at all; the client's probe timeout decides
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": "2025-11-25",
              "capabilities": {"tools": {}}, "serverInfo": {"name": "legacy-only", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}}]}})
    elif method == "tools/call" and msg["params"]["name"] == "echo":
        text(rid, "echo from " + mode)
    elif method == "tools/call" and msg["params"]["name"] == "ask_client":
        answers = {}
        for key, ask in ASKS.items():
            send({"jsonrpc": "2.0", "id": "ask-" + key, **ask})
        while len(answers) < len(ASKS):
            reply = read()
            if "method" not in reply:
                answers[str(reply["id"]).removeprefix("ask-")] = reply
        text(rid, json.dumps(answers))
    else:
        error(rid, -32601, "Method not found: " + str(method))
'''


@pytest.fixture
def legacy_server(tmp_path: Path) -> Callable[[str], tuple[list[str], Callable[[], list[dict[str, Any]]]]]:
    script = tmp_path / "legacy_only.py"
    script.write_text(textwrap.dedent(LEGACY_ONLY))

    def start(mode: str, only: list[str] | None = None) -> tuple[list[str], Callable[[], list[dict[str, Any]]]]:
        log = tmp_path / f"{mode}.jsonl"
        log.write_text("")

        def received() -> list[dict[str, Any]]:
            return [json.loads(line) for line in log.read_text().splitlines()]

        extra = [json.dumps(only)] if only is not None else []
        return [sys.executable, str(script), mode, str(log), *extra], received

    return start


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def probes_of(received: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in received if m.get("method") == "server/discover"]


async def echo(target: list[str], **options: Any) -> tuple[Client, str]:
    async with Client(target, **options) as client:
        return client, (await client.call_tool("echo")).text


def speak_modern(monkeypatch: pytest.MonkeyPatch, versions: tuple[str, ...]) -> None:
    """Make this client speak `versions` (newest first) wherever rondo reads its version list,
    without naming the modules (they are being reshaped): every loaded rondo module holding the
    list gets the new one for this test."""
    from rondo.wire.meta import MODERN_VERSIONS

    for name, module in list(sys.modules.items()):
        if (name.startswith("rondo") and isinstance(module, types.ModuleType)
                and getattr(module, "MODERN_VERSIONS", None) is MODERN_VERSIONS):
            monkeypatch.setattr(module, "MODERN_VERSIONS", versions)


# -- negotiation: the default `server/discover` probe and its fallback -------------------------


@pytest.mark.parametrize("mode", ["method-not-found", "legacy-listed"])
def test_probe_refused_falls_back_to_the_handshake(legacy_server, mode: str) -> None:
    target, received = legacy_server(mode)
    client, text = run(echo(target))
    assert text == f"echo from {mode}"
    assert client.era == "legacy" and client.protocol_version == "2025-11-25"
    assert client.server_info == {"name": "legacy-only", "version": "1"}
    methods = [m.get("method") for m in received()]
    assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]
    assert len(probes_of(received())) == 1  # a JSON-RPC error is an answer: no second probe
    init = next(m for m in received() if m.get("method") == "initialize")
    assert init["params"]["protocolVersion"] == "2025-11-25"
    assert "_meta" not in init["params"] or "io.modelcontextprotocol/protocolVersion" not in init["params"]["_meta"]


def test_silent_probe_times_out_into_the_handshake(legacy_server) -> None:
    target, received = legacy_server("silent")
    client, text = run(echo(target, probe_timeout=0.5))
    assert text == "echo from silent" and client.era == "legacy"
    assert len(probes_of(received())) == 1


def test_unsupported_version_is_retried_once_with_the_mutual_one(legacy_server, monkeypatch) -> None:
    """A client that speaks a newer modern version first is told -32022 and retries with the
    version both sides speak: the retry carries a different version and a fresh id."""
    speak_modern(monkeypatch, ("2099-01-01", "2026-07-28"))
    target, received = legacy_server("older-modern")
    client, text = run(echo(target))
    assert text == "echo from older-modern"
    assert client.era == "modern" and client.protocol_version == "2026-07-28"
    assert client.server_info == {"name": "older-modern", "version": "1"}
    first, second = probes_of(received())
    version = "io.modelcontextprotocol/protocolVersion"
    assert (first["params"]["_meta"][version], second["params"]["_meta"][version]) == (
        "2099-01-01", "2026-07-28")
    assert first["id"] != second["id"]
    call = next(m for m in received() if m.get("method") == "tools/call")
    assert call["params"]["_meta"][version] == "2026-07-28"  # the chosen version sticks
    assert "initialize" not in [m.get("method") for m in received()]


def test_a_server_refusing_the_version_it_lists_is_retried_once_then_a_clear_error(legacy_server) -> None:
    """-32022 listing the very version the client sent: the official runner's request-metadata
    scenario wants one retry (it simulates exactly that rejection); a server that refuses again
    gets a clear error, not more probes and not a silent fall back to the handshake."""
    target, received = legacy_server("refuses-its-own")
    with pytest.raises(ClientError, match="refused protocol version 2026-07-28 although it lists it"):
        run(echo(target))
    first, second = probes_of(received())  # exactly one retry
    assert first["id"] != second["id"]
    assert "initialize" not in [m.get("method") for m in received()]


def test_a_server_speaking_only_an_unknown_version_is_a_clear_error(legacy_server) -> None:
    target, received = legacy_server("future-only")
    with pytest.raises(ClientError, match="server speaks only 2099-01-01; this client speaks 2026-07-28, 2025-11-25"):
        run(echo(target))
    assert len(probes_of(received())) == 1


def test_pinning_a_legacy_version_skips_the_probe(legacy_server) -> None:
    target, received = legacy_server("method-not-found")
    client, text = run(echo(target, protocol="2025-11-25"))
    assert client.era == "legacy" and probes_of(received()) == []


# -- the 2025-11-25 client answering server requests ---------------------------------------------


def test_legacy_client_answers_every_kind_of_server_request(legacy_server, wire_valid) -> None:
    target, received = legacy_server("method-not-found", ["ping", "unknown", "no-handler", "bad-answer",
                                                          "raises", "good", "url-undeclared", "voice",
                                                          "sampling-tools"])
    asked: list[str] = []

    def on_elicit(request: ElicitRequest) -> dict[str, Any]:
        asked.append(request.message)
        if request.message == "bad":
            return {"action": "accept", "content": {"n": "not a number"}}
        return {"action": "accept", "content": request.defaults}  # the form's defaults: n=7

    def on_sample(request: SampleRequest) -> dict[str, Any]:
        raise RuntimeError("the model is down")

    async def go() -> tuple[dict[str, Any], str]:
        async with Client(target, on_elicit=on_elicit, on_sample=on_sample) as client:
            assert client.era == "legacy"
            answers = json.loads((await client.call_tool("ask_client")).text)
            after = (await client.call_tool("echo")).text  # the client is still alive
            return answers, after

    answers, after = run(go())
    assert after == "echo from method-not-found"
    assert sorted(asked) == ["bad", "good"]
    assert answers["ping"]["result"] == {}
    assert answers["good"]["result"] == {"action": "accept", "content": {"n": 7}}
    codes = {key: answers[key].get("error", {}).get("code") for key in answers}
    assert codes == {
        "ping": None,
        "good": None,
        "unknown": METHOD_NOT_FOUND,  # not a method a client answers
        "no-handler": METHOD_NOT_FOUND,  # roots/list, and no on_roots installed
        "bad-answer": INVALID_PARAMS,  # the handler's answer does not fit the schema
        "raises": INTERNAL_ERROR,  # the handler raised
        "url-undeclared": METHOD_NOT_FOUND,  # URL mode was not declared (form only)
        "voice": METHOD_NOT_FOUND,  # no such elicitation mode
        "sampling-tools": METHOD_NOT_FOUND,  # sampling with tools was not declared
    }
    assert "bogus/method" in answers["unknown"]["error"]["message"]
    # The handler's exception text stays on the client (its log has it under the reference).
    assert answers["raises"]["error"]["message"].startswith("Client handler failed (reference ")
    assert "the model is down" not in answers["raises"]["error"]["message"]
    for key, reply in answers.items():
        assert reply["id"] == f"ask-{key}" and reply["jsonrpc"] == "2.0"
        wire_valid(reply, era="2025-11-25", method={"ping": "ping", "good": "elicitation/create"}.get(key))
    # What was declared at initialize matches the handlers installed (no roots).
    init = next(m for m in received() if m.get("method") == "initialize")
    assert set(init["params"]["capabilities"]) == {"elicitation", "sampling"}


def test_legacy_client_without_handlers_refuses_each_request_and_answers_roots_values(legacy_server) -> None:
    """No handlers: every input request is -32601 (nothing declared); roots given as values
    (Root structs) are answered in wire form."""
    from rondo.client import Root

    target, _ = legacy_server("method-not-found", ["raises", "good", "roots-struct"])

    async def go(**options: Any) -> dict[str, Any]:
        async with Client(target, **options) as client:
            return json.loads((await client.call_tool("ask_client")).text)

    bare = run(go())
    assert {k: v["error"]["code"] for k, v in bare.items()} == {
        "raises": METHOD_NOT_FOUND, "good": METHOD_NOT_FOUND, "roots-struct": METHOD_NOT_FOUND}
    with_roots = run(go(on_roots=lambda: [Root("file:///srv/a", "a")]))
    assert with_roots["roots-struct"]["result"] == {"roots": [{"uri": "file:///srv/a", "name": "a"}]}


def test_unknown_elicitation_modes_are_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="unknown elicitation modes: \\['voice'\\]"):
        Client(["true"], elicit_modes=("form", "voice"))
