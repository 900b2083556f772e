"""Cold start of a stdio server: what answering `tools/list` and a plain `tools/call` loads.

Hosts spawn stdio servers on demand, so everything imported before the first answer is paid on
every spawn (issue 17). The server here is built like benchmarks/server.py and served by the
real `run_stdio()` on pipes; once stdin closes it names the heavy modules that were loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tests.helpers.measure import unmeasured_env
from tests.helpers.wire_schema import validate

# Modules a plain stdio server must not load before (or for) its first answers: each one is a
# feature that is not configured, or work only a seal, an open, a failure or an event loop needs.
HEAVY = (
    "asyncio", "logging", "threading", "hmac", "hashlib", "json", "base64", "binascii", "heapq",
    "secrets", "random", "socket", "ssl", "subprocess", "selectors", "dataclasses",
    "uvicorn", "httpx", "opentelemetry", "redis", "cryptography", "pydantic",
    "rondo.state", "rondo.tasks", "rondo.core.tracing", "rondo.transport.stdio_loop",
    "rondo.transport.http", "rondo.kinds.sampling", "rondo.kinds.roots", "rondo.auth",
    "rondo.client", "rondo.middleware", "rondo.wire.content_types", "rondo.apps",
    "importlib.metadata",  # entry points are read only when a tool uses an option (`task=`)
)

SERVER = textwrap.dedent(
    '''
    import sys

    import rondo
    from rondo import elicit

    server = rondo.Server("bench", "1.0.0")
    COLOR = elicit.form(
        "Which color?",
        {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
    )


    @server.tool
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)


    @server.tool
    def ask_color(ctx: rondo.Context) -> str:
        """Ask the user for a color, then echo it."""
        answer = ctx.ask("color", COLOR)
        return answer.content["color"] if answer.accepted else "none"


    @server.tool
    async def later(text: str) -> str:
        """An async tool: the one call here that needs the event loop."""
        return text


    server.run_stdio()
    heavy = HEAVY
    print("LOADED " + " ".join(m for m in heavy if m in sys.modules), file=sys.stderr)
    '''
)
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}


def call(id: int, method: str, params: dict[str, object] | None = None) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": {**(params or {}), "_meta": META}}


def serve(*messages: dict[str, object], watch: tuple[str, ...] = HEAVY,
          ) -> tuple[list[dict[str, object]], set[str]]:
    """Run the server on these messages; its answers and the `watch` modules it had loaded."""
    code = SERVER.replace("heavy = HEAVY", f"heavy = {watch!r}")
    stdin = "".join(json.dumps(m) + "\n" for m in messages)
    done = subprocess.run([sys.executable, "-c", code], input=stdin, capture_output=True,
                          text=True, timeout=60, env=unmeasured_env())
    assert done.returncode == 0, done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("LOADED")]
    return [json.loads(x) for x in done.stdout.splitlines()], set(line.split()[1:])


def test_the_typed_lane_is_built_at_the_first_call_not_before_the_first_answer() -> None:
    watch = ("rondo.core.typed",)
    assert serve(call(1, "tools/list"), watch=watch)[1] == set()
    answers, loaded = serve(call(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}),
                            watch=watch)
    assert loaded == {"rondo.core.typed"}
    assert answers[0]["result"]["content"] == [{"type": "text", "text": "3"}]  # type: ignore[index]


def test_list_and_a_plain_call_load_nothing_heavy() -> None:
    answers, loaded = serve(
        call(1, "tools/list"),
        call(2, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}),
    )
    assert loaded == set()
    listed, added = answers
    for answer in answers:
        validate(answer)
    assert [t["name"] for t in listed["result"]["tools"]] == ["add", "ask_color", "later"]  # type: ignore[index]
    assert added["result"]["content"] == [{"type": "text", "text": "3"}]  # type: ignore[index]


def test_an_mrtr_round_loads_what_sealing_needs_and_still_verifies() -> None:
    # The first leg seals a state: hmac's hashes and the state package load then, not before.
    ask = call(1, "tools/call", {"name": "ask_color", "arguments": {}})
    ask["params"]["_meta"] = {**META, "io.modelcontextprotocol/clientCapabilities": {  # type: ignore[index]
        "elicitation": {"form": {}}}}
    answers, loaded = serve(ask)
    (first,) = answers
    validate(first)
    assert first["result"]["resultType"] == "input_required"  # type: ignore[index]
    assert {"hashlib", "rondo.state"} <= loaded and "asyncio" not in loaded


def test_the_checker_sees_a_module_loaded_on_the_way() -> None:
    # A referee that cannot fail is none: an async tool hands over to asyncio, which logs.
    answers, loaded = serve(call(1, "tools/call", {"name": "later", "arguments": {"text": "hi"}}))
    assert answers[0]["result"]["content"] == [{"type": "text", "text": "hi"}]  # type: ignore[index]
    assert {"asyncio", "logging", "rondo.transport.stdio_loop"} <= loaded


def test_a_failure_is_still_logged_to_stderr_with_its_reference() -> None:
    # logging loads on the first message rondo logs, with stdio's default stderr set-up.
    code = textwrap.dedent(
        '''
        import rondo

        server = rondo.Server("boom")


        @server.tool
        def boom() -> str:
            """Fail."""
            raise RuntimeError("secret detail")


        server.run_stdio()
        '''
    )
    stdin = json.dumps(call(1, "tools/call", {"name": "boom", "arguments": {}})) + "\n"
    done = subprocess.run([sys.executable, "-c", code], input=stdin, capture_output=True,
                          text=True, timeout=60, env=unmeasured_env())
    assert done.returncode == 0, done.stderr
    (answer,) = [json.loads(x) for x in done.stdout.splitlines()]
    text = json.dumps(answer)
    assert "secret detail" not in text and "reference" in text
    ref = text.split("reference ")[1][:12]
    logged = [x for x in done.stderr.splitlines() if x.startswith("ERROR:rondo.server:")]
    assert logged and ref in logged[0]
    assert "RuntimeError: secret detail" in done.stderr  # the traceback stays on the server


def test_the_state_keys_variable_is_named_once() -> None:
    from rondo.server.server import STATE_KEYS_ENV
    from rondo.state.keys import ENV_KEYS

    assert STATE_KEYS_ENV == ENV_KEYS


def test_configured_keys_are_still_checked_when_the_server_is_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import rondo

    monkeypatch.setenv("RONDO_STATE_KEYS", "k1:not base64!")
    with pytest.raises(ValueError, match="RONDO_STATE_KEYS"):
        rondo.Server("x")
    monkeypatch.delenv("RONDO_STATE_KEYS")
    server = rondo.Server("x")
    policy = server.state_policy  # the random-key policy, made on first use, then kept
    assert policy is not None and policy.ephemeral and server.state_policy is policy
    assert rondo.Server("y", state=None).state_policy is None
