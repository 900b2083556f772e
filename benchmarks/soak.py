"""Soak: memory and connections stay flat under floods (issue 16). Run by hand, not in tests.

    .venv/bin/python benchmarks/soak.py                   # every soak, full size (~2 min)
    .venv/bin/python benchmarks/soak.py --scale 0.1       # a quick look
    .venv/bin/python benchmarks/soak.py --only slowloris

Soaks: `mrtr` (100,000 MRTR flows in process, one-time sealed state), `legacy` (10,000
2025-11-25 sessions over the ASGI app, each with a dropped request stream full of events),
`listen` (1,000 never-read listen streams plus 60,000 change events), `slowloris` (1,010
connections trickling headers at a real uvicorn under `serve()`'s limits, then a normal
request). Each prints RSS at checkpoints; flat means the last checkpoints differ by little.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import rondo  # noqa: E402
from rondo import elicit  # noqa: E402
from rondo.state import MemoryReplayStore, StatePolicy  # noqa: E402
from rondo.transport.http import HttpApp  # noqa: E402
from rondo.transport.memory import MemoryConnection  # noqa: E402

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
COLOR = elicit.form("Color?", {"type": "object", "properties": {"c": {"type": "string"}}})


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def checkpoint(label: str, i: int, start: float) -> None:
    gc.collect()
    print(f"  {label:8} {i:>8,}  rss {rss_mb():7.1f} MB  {time.perf_counter() - start:6.1f} s", flush=True)


# -- 100,000 MRTR flows ---------------------------------------------------------------------------


async def soak_mrtr(n: int) -> None:
    policy = StatePolicy(secret=b"s" * 32, once=True, replay_store=MemoryReplayStore())
    server = rondo.Server("soak", state=policy)

    @server.tool
    def pick(ctx: rondo.Context) -> str:
        """Asks a color."""
        answer = ctx.ask("color", COLOR)
        return f"picked {answer.content['c']}"

    conn = MemoryConnection(server)
    start = time.perf_counter()
    for i in range(1, n + 1):
        first = await conn.send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                 "params": {"name": "pick", "arguments": {}, "_meta": META}})
        assert first is not None
        state = first["result"]["requestState"]
        done = await conn.send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
            "name": "pick", "arguments": {}, "_meta": META, "requestState": state,
            "inputResponses": {"color": {"action": "accept", "content": {"c": "red"}}}}})
        assert done is not None and "result" in done, done
        if i % max(1, n // 5) == 0:
            checkpoint("mrtr", i, start)


# -- 10,000 legacy sessions -----------------------------------------------------------------------


class Call:
    def __init__(self, app: Any, method: str, headers: dict[str, str], body: Any = None,
                 drop_after: int | None = None) -> None:
        self.app = app
        hdrs = [(b"host", b"127.0.0.1"), (b"accept", b"application/json, text/event-stream")]
        hdrs += [(k.encode(), v.encode()) for k, v in headers.items()]
        if body is not None:
            hdrs.append((b"content-type", b"application/json"))
        self.scope = {"type": "http", "method": method, "path": "/mcp", "headers": hdrs}
        self.body = b"" if body is None else msgspec.json.encode(body)
        self.start: dict[str, Any] | None = None
        self.chunks: list[bytes] = []
        self.gone = asyncio.Event()
        self.drop_after = drop_after
        self.sent = False

    async def receive(self) -> dict[str, Any]:
        if not self.sent:
            self.sent = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        if self.gone.is_set():
            raise OSError("gone")
        if message["type"] == "http.response.start":
            self.start = message
        else:
            self.chunks.append(message.get("body", b""))
            if self.drop_after is not None and len(self.chunks) >= self.drop_after:
                self.gone.set()  # the connection drops mid-stream

    async def run(self) -> Call:
        await self.app(self.scope, self.receive, self.send)
        return self


async def soak_legacy(n: int) -> None:
    server = rondo.Server("soak-legacy", state=None)

    @server.tool
    async def chatter(ctx: rondo.Context) -> str:
        """Reports progress a lot, then answers."""
        for i in range(300):
            await ctx.report_progress(i, 300, "x" * 200)
        return "ok"

    app = HttpApp(server)
    start = time.perf_counter()
    for i in range(1, n + 1):
        init = await Call(app, "POST", {}, {
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "soak", "version": "1"}}}).run()
        assert init.start is not None
        sid = dict(init.start["headers"])[b"mcp-session-id"].decode()
        head = {"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        await Call(app, "POST", head, {"jsonrpc": "2.0", "method": "notifications/initialized"}).run()
        await Call(app, "POST", head, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                       "params": {"name": "chatter", "arguments": {},
                                                  "_meta": {"progressToken": i}}},
                   drop_after=2).run()
        if i % max(1, n // 5) == 0:
            await asyncio.sleep(0.01)
            checkpoint("legacy", i, start)
    print(f"  sessions live: {len(app.legacy.sessions):,}; replay bytes kept: "
          f"{app.legacy.budget.used / 1e6:.1f} MB")


# -- 1,000 never-read listen streams ------------------------------------------------------------


async def soak_listen(streams: int, events: int) -> None:
    server = rondo.Server("soak-listen", state=None)

    @server.tool
    def x() -> str:
        """x"""
        return "x"

    app = HttpApp(server)
    stuck = asyncio.Event()

    async def never_read(rid: int) -> None:
        body = msgspec.json.encode({"jsonrpc": "2.0", "id": rid, "method": "subscriptions/listen",
                                    "params": {"notifications": {"toolsListChanged": True}, "_meta": META}})
        headers = [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
                   (b"accept", b"application/json, text/event-stream"),
                   (b"mcp-method", b"subscriptions/listen"),
                   (b"mcp-protocol-version", b"2026-07-28")]
        frames = 0
        sent = False

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await stuck.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            nonlocal frames
            frames += 1
            if frames > 2:
                await stuck.wait()  # the client never reads again

        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
        await app(scope, receive, send)

    start = time.perf_counter()
    tasks = [asyncio.ensure_future(never_read(i)) for i in range(streams)]
    await asyncio.sleep(0.2)
    checkpoint("listen", 0, start)
    for i in range(1, events + 1):
        server.notify_tools_changed()
        if i % 100 == 0:
            await asyncio.sleep(0)
        if i % max(1, events // 5) == 0:
            checkpoint("listen", i, start)
    print(f"  listeners left in the fan-out: {len(server.core.subscriptions)}")
    stuck.set()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


# -- slowloris against serve()'s limits ---------------------------------------------------------


def soak_slowloris(connections: int) -> None:
    import uvicorn

    from rondo.transport.serve.limits import HttpLimits, uvicorn_options

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = rondo.Server("soak-http", state=None)

    @server.tool
    def x() -> str:
        """x"""
        return "x"
    limits = HttpLimits(header_timeout=5)
    config = uvicorn.Config(HttpApp(server), host="127.0.0.1", port=port, log_level="error",
                            lifespan="off", **uvicorn_options(limits))
    userver = uvicorn.Server(config)
    thread = threading.Thread(target=userver.run, daemon=True)
    thread.start()
    while not userver.started:
        time.sleep(0.05)
    start = time.perf_counter()
    socks = []
    for _ in range(connections):
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: ")
            socks.append(sock)
        except OSError as exc:
            print(f"  client side stopped at {len(socks)} sockets: {exc}")
            break
    print(f"  {len(socks):,} slow connections open, cap {limits.connection_cap()}")
    ok = _request(port)
    print(f"  a normal request while they trickle: {ok}  ({time.perf_counter() - start:.1f} s)")
    time.sleep(limits.header_timeout + 1)
    closed = sum(1 for s in socks if _closed(s))
    print(f"  after {limits.header_timeout:.0f} s: {closed:,} of {len(socks):,} slow connections closed")
    print(f"  a normal request after: {_request(port)}")
    for sock in socks:
        sock.close()
    userver.should_exit = True
    thread.join(10)


def _request(port: int) -> str:
    body = msgspec.json.encode({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}})
    try:
        # From another loopback address: the slow connections hold 127.0.0.1's share
        # (HttpLimits.max_connections_per_peer) whatever the global cap has left.
        with socket.create_connection(("127.0.0.1", port), timeout=10,
                                      source_address=("127.0.0.2", 0)) as sock:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                         b"accept: application/json\r\nmcp-method: tools/list\r\n"
                         b"mcp-protocol-version: 2026-07-28\r\nconnection: close\r\n"
                         b"content-length: %d\r\n\r\n%s" % (len(body), body))
            return sock.recv(64).split(b"\r\n", 1)[0].decode()
    except OSError as exc:
        return f"failed: {exc}"


def _closed(sock: socket.socket) -> bool:
    sock.settimeout(0.01)
    try:
        return sock.recv(4096) is not None
    except (TimeoutError, BlockingIOError):
        return False
    except OSError:
        return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--only", choices=["mrtr", "legacy", "listen", "slowloris"])
    args = parser.parse_args()
    k = args.scale
    print(f"rss at start {rss_mb():.1f} MB (pid {os.getpid()})")
    if args.only in (None, "mrtr"):
        print(f"mrtr: {int(100_000 * k):,} flows")
        asyncio.run(soak_mrtr(int(100_000 * k)))
    if args.only in (None, "legacy"):
        print(f"legacy: {int(10_000 * k):,} sessions")
        asyncio.run(soak_legacy(int(10_000 * k)))
    if args.only in (None, "listen"):
        print(f"listen: {int(1_000 * k):,} streams, {int(60_000 * k):,} events")
        asyncio.run(soak_listen(int(1_000 * k), int(60_000 * k)))
    if args.only in (None, "slowloris"):
        print(f"slowloris: {int(1_010 * k):,} connections")
        soak_slowloris(int(1_010 * k))


if __name__ == "__main__":
    main()
