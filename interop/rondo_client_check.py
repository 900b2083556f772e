"""rondo's client drives a server written with the official TypeScript SDK (interop/ts_server.mjs).

    .venv/bin/python interop/rondo_client_check.py [--stdio | --http] [--node PATH]

Over stdio and over HTTP on the 2026-07-28 wire (pinned, and negotiated by the discover probe),
and over stdio on the 2025-11-25 wire (the TS server's legacy shim sends real elicitation,
sampling and roots requests), it checks:
form elicitation (accept and decline, requestState echoed byte for byte: the server refuses
otherwise), sampling, roots, a two-round call asking for all three, URL elicitation, a missing
handler (no capability declared, so the server refuses with -32021), and manual mode with the
pending call serialised and resumed by a second client. Every retry must use a fresh id.
Exits 0 when every check passes.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from rondo.client import Client, ElicitRequest, McpError, PendingCall, SampleRequest  # noqa: E402

SERVER = str(ROOT / "interop" / "ts_server.mjs")
ROOTS = [{"uri": "file:///tmp/a", "name": "a"}, {"uri": "file:///tmp/b"}]


def elicit(request: ElicitRequest) -> dict[str, Any]:
    if request.mode == "url":
        assert request.url == "https://example.com/sign-in", request.url
        return {"action": "accept"}
    props = (request.requested_schema or {}).get("properties", {})
    if "nights" in props:
        return {"action": "accept", "content": {"nights": 3}}
    if "decline" in request.message:
        return {"action": "decline"}
    return {"action": "accept", "content": {"confirmed": True}}


async def sample(request: SampleRequest) -> dict[str, Any]:
    assert request.max_tokens > 0 and request.messages, request
    return {"role": "assistant", "content": {"type": "text", "text": "short"}, "model": "rondo-test-model"}


class Wire:
    """Records every request the client sends (without changing it)."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def attach(self, client: Client) -> None:
        original = client.transport.request

        async def recording(message: dict[str, Any], headers: Any = None) -> dict[str, Any]:
            self.sent.append(message)
            return await original(message, headers)

        client.transport.request = recording  # type: ignore[method-assign]

    def calls(self, tool: str) -> list[dict[str, Any]]:
        return [m for m in self.sent if m["method"] == "tools/call" and m["params"]["name"] == tool]


def check_legs(wire: Wire, tool: str, legs: int) -> None:
    sent = wire.calls(tool)
    assert len(sent) == legs, f"{tool}: {len(sent)} legs, expected {legs}"
    ids = [m["id"] for m in wire.sent]
    assert len(ids) == len(set(ids)), f"ids repeat: {ids}"
    assert "requestState" not in sent[0]["params"] and "inputResponses" not in sent[0]["params"]


async def run_era(target: Callable[[], Any], protocol: str | None, label: str) -> list[str]:
    passed: list[str] = []
    wire = Wire()
    async with Client(target(), protocol=protocol, on_elicit=elicit, on_sample=sample, on_roots=ROOTS,
                      elicit_modes=("form", "url"), timeout=30) as client:
        wire.attach(client)
        modern = client.era == "modern"
        assert client.era == ("legacy" if protocol and protocol.startswith("2025") else "modern"), client.era

        result = await client.call_tool("confirm_action", {"action": "deploy"})
        assert result.text == "confirmed deploy", result.text
        if modern:
            check_legs(wire, "confirm_action", 2)
            retry = wire.calls("confirm_action")[1]["params"]
            assert retry["inputResponses"] == {"confirm": {"action": "accept", "content": {"confirmed": True}}}
        passed.append("form elicitation (accept)")

        result = await client.call_tool("confirm_action", {"action": "decline this"})
        assert result.text == "declined decline this", result.text
        passed.append("form elicitation (decline)")

        result = await client.call_tool("summarize", {"text": "a long story"})
        assert result.text == "summary (rondo-test-model): short", result.text
        passed.append("sampling")

        result = await client.call_tool("show_roots", {})
        assert result.text == "roots: file:///tmp/a,file:///tmp/b", result.text
        passed.append("roots")

        if modern:  # the TS legacy shim cannot replay a handler that asks twice
            result = await client.call_tool("plan_trip", {"city": "Lisbon"})
            assert result.text == "Lisbon: nights=3; idea: short; roots: file:///tmp/a,file:///tmp/b", result.text
            check_legs(wire, "plan_trip", 3)
            assert wire.calls("plan_trip")[2]["params"]["requestState"] == "nights=3"
            passed.append("two rounds (form, then sampling + roots at once)")

            result = await client.call_tool("open_link", {})
            assert result.text == "link accept", result.text
            passed.append("URL elicitation")

            pending = await client.call_tool("confirm_action", {"action": "ship"}, manual=True)
            assert isinstance(pending, PendingCall) and set(pending.input_requests) == {"confirm"}
            blob = pending.to_json()
            async with Client(target(), protocol=protocol, timeout=30) as other:  # "another process"
                wire2 = Wire()
                wire2.attach(other)
                final = await other.resume(PendingCall.from_json(blob),
                                           {"confirm": {"action": "accept", "content": {"confirmed": True}}})
                assert final.text == "confirmed ship", final.text
                assert wire2.sent[-1]["params"]["requestState"] == pending.request_state
            passed.append("manual mode, serialised and resumed by another client")

    if modern:
        async with Client(target(), protocol=protocol, on_elicit=elicit, timeout=30) as client:
            assert "sampling" not in client.handlers.capabilities()
            try:
                await client.call_tool("summarize", {"text": "x"})
            except McpError as exc:
                assert exc.code == -32021, exc
            else:
                raise AssertionError("sampling without a handler should be refused with -32021")
        passed.append("no sampling handler: capability not declared, server refuses (-32021)")
    return [f"{label}: {name}" for name in passed]


def start_http(node: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([node, SERVER, "--http"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http://"):
        proc.kill()
        raise SystemExit(f"TS server did not start (printed {url!r})")
    return proc, url


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stdio", action="store_true")
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--node", default=shutil.which("node") or "node")
    args = parser.parse_args(argv)
    both = not (args.stdio or args.http)
    results: list[str] = []
    if args.stdio or both:
        command = [args.node, SERVER, "--stdio"]
        results += await run_era(lambda: command, "2026-07-28", "stdio 2026-07-28")
        results += await run_era(lambda: command, None, "stdio auto")
        results += await run_era(lambda: command, "2025-11-25", "stdio 2025-11-25")
    if args.http or both:
        proc, url = start_http(args.node)
        try:
            results += await run_era(lambda: url, "2026-07-28", "http 2026-07-28")
            results += await run_era(lambda: url, None, "http auto")
            # No 2025-11-25 leg over HTTP: the TS server serves legacy HTTP per request, with no
            # channel for server-to-client requests (it says so and refuses). rondo's legacy HTTP
            # path is exercised by the conformance lane and by rondo's own server.
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(10)
    for line in results:
        print(f"ok   rondo client -> TS server: {line}")
    print(f"rondo client -> TS server: {len(results)} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
