"""Issue 37 item 7: how long does a stalled Redis hold a worker that raises changes?

Starts a redis-server on a loopback port, a server on a `RedisBus`, stops Redis (SIGSTOP: its
connections stay open and nothing answers), then sends four concurrent `touch` calls (each
`notify_resource_updated`) and one `ping`, in process, and prints how long each waited.
Needs redis-server and the redis package.

    .venv/bin/python benchmarks/probe_bus_stall.py
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from typing import Any

from loopback_redis import loopback_redis  # a sibling: benchmarks/ is sys.path[0]

import rondo
from rondo.fleet import use_bus
from rondo.fleet.redis_bus import RedisBus
from rondo.testing import connect


def call(rid: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": meta}}


async def probe(url: str, pid: int) -> None:
    server = rondo.Server("stall")
    bus = RedisBus(url=url, channel="stall")
    use_bus(server, bus)

    @server.tool
    async def touch(uri: str) -> str:
        """Mark a resource changed."""
        server.notify_resource_updated(uri)
        return "touched"

    @server.tool
    async def ping() -> str:
        """Answer at once."""
        return "pong"

    await bus.start()
    conn = connect(server)
    os.kill(pid, signal.SIGSTOP)
    try:
        started = time.perf_counter()
        touches = [asyncio.ensure_future(conn.send(call(i, "touch", {"uri": f"file:///{i}"})))
                   for i in range(4)]
        await asyncio.sleep(0)  # the touches begin before the ping is sent
        await conn.send(call(9, "ping", {}))
        pinged = time.perf_counter() - started
        await asyncio.gather(*touches)
        touched = time.perf_counter() - started
        print(f"Redis stopped: ping answered after {pinged * 1000:.1f} ms, "
              f"four touches after {touched * 1000:.1f} ms")
    finally:
        os.kill(pid, signal.SIGCONT)
        await bus.stop()


def main() -> None:
    with loopback_redis() as (url, pid):
        asyncio.run(probe(url, pid))


if __name__ == "__main__":
    main()
