"""Live-session memory of the legacy (2025-11-25) era: does RSS stay flat across many sessions?

Drives the ASGI app in-process (no sockets, so only the server's own memory is measured):

- closed: 10,000 sequential sessions, each initialize + notifications/initialized + a tools/call
  whose handler asks the client a question over the back-channel (answered) + DELETE;
- abandoned: 10,000 sessions that initialize and call a tool but never DELETE, with the default
  cap (10,000) and then 10,000 more past it (the least recently used idle sessions are evicted);
- abandoned, cap 1,000: the same 20,000 abandoned sessions against a small cap.

Run: .venv/bin/python benchmarks/bench_sessions.py [--sessions N]
Prints RSS (MiB) and the live-session count every N/10 sessions.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
from typing import Any

import msgspec

import rondo
from rondo import elicit
from rondo.legacy import LegacyConfig
from rondo.transport.http import HttpApp

_encode = msgspec.json.encode
_decode = msgspec.json.decode

QUESTION = elicit.form(
    "Which color?", {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
)


def make_server() -> rondo.Server:
    server = rondo.Server("bench-sessions", "1.0.0")

    @server.tool
    async def favorite(ctx: rondo.Context) -> str:
        """Asks one question over the back-channel."""
        answer = await ctx.ask("color", QUESTION)
        return f"likes {answer.content['color']}"

    @server.tool
    def hello(name: str) -> str:
        """No question."""
        return f"hello {name}"

    return server


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


async def exchange(app: Any, method: str, headers: list[tuple[bytes, bytes]], body: Any = None,
                   on_event: Any = None) -> tuple[int, dict[bytes, bytes], bytes]:
    """One request through the app; `on_event(message)` sees each SSE message as it arrives."""
    raw = b"" if body is None else _encode(body)
    scope = {"type": "http", "method": method, "path": "/mcp",
             "headers": [(b"host", b"localhost"), *headers]}
    delivered = False
    done = asyncio.Event()
    status = 0
    out_headers: dict[bytes, bytes] = {}
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": raw, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            out_headers.update(message["headers"])
            return
        chunk = message.get("body", b"")
        chunks.append(chunk)
        if on_event is not None and chunk:
            for block in chunk.split(b"\n\n"):
                for line in block.split(b"\n"):
                    if line.startswith(b"data: ") and len(line) > 6:
                        await on_event(_decode(line[6:]))
        if not message.get("more_body", False):
            done.set()

    await app(scope, receive, send)
    done.set()
    return status, out_headers, b"".join(chunks)


async def one_session(app: Any, n: int, *, delete: bool, ask: bool) -> None:
    accept = (b"accept", b"application/json, text/event-stream")
    status, headers, _ = await exchange(app, "POST", [accept], {
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                   "clientInfo": {"name": "bench", "version": "1"}}})
    assert status == 200
    session = [accept, (b"mcp-session-id", headers[b"mcp-session-id"]), (b"mcp-protocol-version", b"2025-11-25")]
    status, _, _ = await exchange(app, "POST", session, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert status == 202

    async def answer(msg: dict[str, Any]) -> None:
        if msg.get("method") == "elicitation/create":
            reply = {"jsonrpc": "2.0", "id": msg["id"], "result": {"action": "accept", "content": {"color": "red"}}}
            asyncio.ensure_future(exchange(app, "POST", session, reply))

    call = {"name": "favorite", "arguments": {}} if ask else {"name": "hello", "arguments": {"name": str(n)}}
    status, _, body = await exchange(app, "POST", session,
                                     {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call},
                                     on_event=answer)
    assert status == 200 and b"likes red" in body or b"hello" in body, body
    if delete:
        status, _, _ = await exchange(app, "DELETE", session)
        assert status == 200


async def scenario(title: str, sessions: int, *, delete: bool, ask: bool, cap: int) -> None:
    app = HttpApp(make_server(), legacy=LegacyConfig(max_sessions=cap))
    table = app.legacy.sessions
    step = max(1, sessions // 10)
    print(f"\n{title} (cap {cap:,})")
    print(f"{'sessions':>9} {'live':>7} {'RSS MiB':>8}")
    gc.collect()
    print(f"{0:>9,} {len(table):>7,} {rss_mib():>8.1f}")
    for n in range(1, sessions + 1):
        await one_session(app, n, delete=delete, ask=ask)
        if n % step == 0:
            gc.collect()
            print(f"{n:>9,} {len(table):>7,} {rss_mib():>8.1f}")
    await app.legacy.shutdown()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=10_000)
    args = parser.parse_args()
    n = args.sessions
    await scenario(f"closed: initialize + ask + DELETE, {n:,} sessions", n, delete=True, ask=True, cap=10_000)
    await scenario(f"abandoned: initialize + call, never deleted, {2 * n:,} sessions", 2 * n,
                   delete=False, ask=False, cap=10_000)
    await scenario(f"abandoned: {2 * n:,} sessions", 2 * n, delete=False, ask=False, cap=1_000)


if __name__ == "__main__":
    asyncio.run(main())
