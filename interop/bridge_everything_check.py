"""The legacy bridge against a server nobody here wrote: the official reference server
`@modelcontextprotocol/server-everything` 2026.8.31 (interop/everything/, a 2025-11-25 server on
the TypeScript SDK 1.x, over Streamable HTTP with sessions) behind real `rondo proxy --http
--bridge hold` and `--bridge replay` processes, its interactive tools walked by `rondo.Client`
by the official TypeScript client 2.4.0 (interop/bridge_everything_ts.mjs) and by the official
Python client, mcp 2.3.0 (interop/bridge_everything_py.py), on 2026-07-28
(input rounds made by the bridge) and on 2025-11-25 (the proxy asks the client over its session
and plays the retrying client, the bridge in between).

    .venv/bin/python interop/bridge_everything_check.py

Its tools ask mid-call: `trigger-elicitation-request` (`elicitation/create`, a form of twelve
fields), `trigger-url-elicitation` (a URL-mode `elicitation/create` with an `elicitationId`),
`trigger-sampling-request` (`sampling/createMessage`) and `get-roots-list` (`roots/list`); server-everything registers each only for a client that declared the
capability at `initialize`, which the bridge's per-capability upstream sessions tell it. Every
check line names the bridge mode, the upstream's era and the client's. Exits 0 when all pass.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from gateway_peers_check import (
    EVERYTHING,
    MCP_PY,
    NODE,
    RONDO,
    Mcpdo,
    process,
    text_of,
)
from harness import free_port

ERAS = {"modern": "2026-07-28", "legacy": "2025-11-25"}
ROOTS = [{"uri": "file:///work/project", "name": "project"}]


def answer_form(request: Any) -> Any:
    from rondo.client import ElicitResult

    if request.mode == "url":  # the user "opened" the link
        assert request.url == "https://example.com/consent", request.url
        return ElicitResult("accept")
    assert request.message == "Please provide inputs for the following fields:", request.message
    return ElicitResult("accept", {"name": "Ada Lovelace", "check": True, "integer": 7})


def sample(request: Any) -> Any:
    return {"role": "assistant", "content": {"type": "text", "text": "Paris."},
            "model": "interop-model", "stopReason": "endTurn"}


async def walk(mode: str, url: str, era: str, upstream_era: str) -> list[str]:
    from rondo.client import Client, PendingCall

    done = []
    async with Client(url, protocol=ERAS[era], on_elicit=answer_form, on_sample=sample,
                      on_roots=ROOTS, elicit_modes=("form", "url"), timeout=30) as client:
        assert client.era == era, client.era
        tools = {t.name for t in await client.list_tools()}
        wanted = {"trigger-elicitation-request", "trigger-sampling-request", "get-roots-list"}
        assert wanted <= tools, sorted(tools)
        if era == "modern":  # the round itself, as the bridge makes it
            pending = await client.call_tool("trigger-elicitation-request", manual=True)
            assert isinstance(pending, PendingCall), pending
            [(key, request)] = pending.input_requests.items()
            assert request["method"] == "elicitation/create", request
            assert "elicitationId" not in request["params"] and "_meta" not in request["params"]
            assert request["params"]["requestedSchema"]["required"] == ["name"]
            done.append(f"trigger-elicitation-request: input_required round, key {key!r}, "
                        "elicitation/create with its 12-field form")
            result = await client.resume(pending, {key: {"action": "accept", "content": {
                "name": "Grace Hopper", "check": False}}})
            assert "- Name: Grace Hopper" in result.text, result.text
            done.append("  retried with the answer: completed (Name: Grace Hopper)")
        result = await client.call_tool("trigger-elicitation-request")
        assert "User provided the requested information" in result.text, result.text
        assert "- Name: Ada Lovelace" in result.text and "- Favorite Integer: 7" in result.text
        done.append("trigger-elicitation-request completed (accepted, Name: Ada Lovelace)")
        result = await client.call_tool("trigger-sampling-request",
                                        {"prompt": "Capital of France?", "maxTokens": 20})
        assert "LLM sampling result" in result.text and "Paris." in result.text, result.text
        done.append("trigger-sampling-request completed (sampled: Paris.)")
        result = await client.call_tool("get-roots-list")
        assert "file:///work/project" in result.text, result.text
        done.append("get-roots-list completed (the client's root listed)")
        consent = {"url": "https://example.com/consent", "message": "Consent, please."}
        if era == "modern":  # a URL elicitation: the upstream's elicitationId stays upstream
            pending = await client.call_tool("trigger-url-elicitation", consent, manual=True)
            assert isinstance(pending, PendingCall), pending
            [(key, request)] = pending.input_requests.items()
            assert request == {"method": "elicitation/create", "params": {
                "mode": "url", "url": consent["url"], "message": consent["message"]}}, request
            result = await client.resume(pending, {key: {"action": "accept"}})
        else:
            result = await client.call_tool("trigger-url-elicitation", consent)
        assert "User completed the URL elicitation flow" in result.text, result.text
        done.append("trigger-url-elicitation completed (URL mode, accepted"
                    + (", no elicitationId in the round)" if era == "modern" else ")"))
        assert (await client.call_tool("echo", {"message": "hi"})).text == "Echo: hi"
        done.append("echo (no question) completed")
    return done


def mcpdo_walk(url: str, era: str) -> list[str]:
    """The Inspector CLI's walk (mcpdo 2.12.0, a private daemon): roots set, then the form
    elicitation answered with `elicitation/respond` and the roots listed. mcpdo answers no
    sampling, so `trigger-sampling-request` is not walked by it."""
    import json
    import shutil

    home = Path(tempfile.mkdtemp(prefix=f"rondo-bridge-mcpdo-{era}-"))
    cli: Mcpdo | None = None
    try:
        config = home / "servers.json"
        config.write_text(json.dumps({"mcpServers": {"ev": {"type": "streamable-http",
                                                            "url": url}}}))
        cli = Mcpdo(home)
        out = cli.run("--config", str(config), "connect", "ev", "--era", era)
        assert out.get("protocolEra") == era, out
        cli.run("@ev", "roots/set", "--roots-json", json.dumps(ROOTS))
        out = cli.run("@ev", "tools/call", "trigger-elicitation-request")
        ask = out.get("elicitationPending")
        assert ask and ask["mode"] == "form", f"expected a parked question, got {out}"
        got = text_of(cli.run("elicitation/respond", ask["elicitationId"],
                              "name:=Ada Lovelace", "check:=true", "integer:=7"))
        assert "- Name: Ada Lovelace" in got and "- Favorite Integer: 7" in got, got
        got = text_of(cli.run("@ev", "tools/call", "get-roots-list"))
        assert "file:///work/project" in got, got
        return ["trigger-elicitation-request completed (parked, answered with "
                "elicitation/respond: Name: Ada Lovelace)",
                "get-roots-list completed (the roots set with roots/set listed)"]
    finally:
        if cli is not None:
            cli.stop()
        shutil.rmtree(home, ignore_errors=True)


def ts_walk(url: str, era: str) -> list[str]:
    """The official TypeScript client's walk (interop/bridge_everything_ts.mjs)."""
    return sub_walk([NODE, str(Path(__file__).with_name("bridge_everything_ts.mjs")), "--era",
                     era, url])


def py_walk(url: str, era: str) -> list[str]:
    """The official Python client's walk (interop/bridge_everything_py.py, in its own venv)."""
    return sub_walk([MCP_PY, str(Path(__file__).with_name("bridge_everything_py.py")), "--era",
                     era, url])


def sub_walk(argv: list[str]) -> list[str]:
    import subprocess

    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}: {proc.stdout[-800:]} {proc.stderr[-1500:]}")
    lines = [line.removeprefix("ok ") for line in proc.stdout.splitlines() if line.startswith("ok ")]
    assert len(lines) == 4, proc.stdout
    return lines


async def upstream_era(url: str) -> str:
    from rondo.client import Client

    async with Client(url, timeout=20) as client:
        return f"{client.era} {client.protocol_version}"


def main() -> int:
    if not EVERYTHING.is_file():
        print(f"FAIL server-everything is not installed ({EVERYTHING}); run interop/run.sh")
        return 1
    failures = 0
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        logs = Path(tmp)
        port = free_port()
        up = f"http://127.0.0.1:{port}/mcp"
        stack.enter_context(process([NODE, str(EVERYTHING), "streamableHttp"], up,
                                    "up-everything", logs, {"PORT": str(port)}))
        era_up = asyncio.run(upstream_era(up))
        assert era_up.startswith("legacy 2025-11-25"), era_up
        for mode in ("hold", "replay"):
            front_port = free_port()
            url = f"http://127.0.0.1:{front_port}/mcp"
            argv = [RONDO, "proxy", up, "--http", f"127.0.0.1:{front_port}", "--timeout", "20",
                    "--bridge", mode]
            with process(argv, url, f"proxy-{mode}", logs):
                for era in ("modern", "legacy"):
                    for who in ("rondo.Client", "typescript", "python", "mcpdo"):
                        label = f"[bridge {mode}, upstream {era_up}, client {who} {era}]"
                        try:
                            if who == "typescript":
                                lines = ts_walk(url, era)
                            elif who == "python":
                                lines = py_walk(url, era)
                            elif who == "mcpdo":
                                lines = mcpdo_walk(url, era)
                            else:
                                lines = asyncio.run(walk(mode, url, era, era_up))
                            for line in lines:
                                print(f"ok {label} {line}")
                        except Exception as exc:  # report every walk, then fail
                            failures += 1
                            print(f"FAIL {label} {type(exc).__name__}: {exc}")
                            for name in (f"proxy-{mode}", "up-everything"):
                                print(f"--- {name}.log\n{(logs / f'{name}.log').read_text()[-1500:]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
