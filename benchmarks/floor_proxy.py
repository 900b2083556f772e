"""The proxy floor: the least a proxy can do to relay the benchmark's calls, with no MCP work.

    python benchmarks/floor_proxy.py http PORT UPSTREAM_PORT

A bare ASGI callable on the same uvicorn stack `rondo proxy` serves on (uvloop, httptools, no
access log), which hands each POST's body and headers as they came to the upstream over kept-alive
HTTP/1.1 connections of its own (a plain `asyncio.Protocol`, one connection per request in flight)
and answers with the upstream's status, content type and body. It checks nothing, namespaces
nothing, seals nothing (the upstream's requestState goes through as it is), keeps no deadline and
drops the client's headers only where HTTP needs it (Host, Content-Length, Connection). Served
beside the upstream alone, it shows what the stack costs a relay before any MCP work: the share of
the issue's "at most 2x a direct call's server CPU" that is left for the proxy's own checks.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from floor import lifespan  # noqa: E402

_DROPPED = {b"host", b"content-length", b"connection", b"transfer-encoding"}


class _Link(asyncio.Protocol):
    """One kept-alive connection to the upstream; answers are read by Content-Length only."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.waiter: asyncio.Future[None] | None = None
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(ConnectionError("upstream closed"))

    async def more(self) -> None:
        self.waiter = asyncio.get_running_loop().create_future()
        await self.waiter

    async def exchange(self, request: bytes) -> tuple[bytes, bytes, bytes]:
        """Send one request; the answer's status line, content type and body."""
        assert self.transport is not None
        self.transport.write(request)
        while (end := self.buf.find(b"\r\n\r\n")) < 0:
            await self.more()
        head = bytes(self.buf[:end]).split(b"\r\n")
        length, kind = 0, b"application/json"
        for line in head[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"content-type":
                kind = value.strip()
        start = end + 4
        while len(self.buf) < start + length:
            await self.more()
        body = bytes(self.buf[start:start + length])
        del self.buf[:start + length]
        return head[0], kind, body


class Relay:
    def __init__(self, port: int) -> None:
        self.port = port
        self.idle: list[_Link] = []

    async def link(self) -> _Link:
        while self.idle:
            link = self.idle.pop()
            if not link.closed:
                return link
        loop = asyncio.get_running_loop()
        _, link = await loop.create_connection(_Link, "127.0.0.1", self.port)
        return link

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            return await lifespan(receive, send)
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        lines = [b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % self.port]
        lines += [name + b": " + value + b"\r\n" for name, value in scope["headers"]
                  if name not in _DROPPED]
        lines.append(b"Content-Length: %d\r\n\r\n" % len(body))
        link = await self.link()
        status, kind, data = await link.exchange(b"".join(lines) + body)
        self.idle.append(link)
        await send({"type": "http.response.start", "status": int(status.split()[1]), "headers": [
            (b"content-type", kind), (b"content-length", b"%d" % len(data))]})
        await send({"type": "http.response.body", "body": data})


def main(argv: list[str]) -> None:
    """`http PORT UPSTREAM_PORT`: plain uvicorn with uvloop and httptools."""
    import uvicorn

    uvicorn.run(Relay(int(argv[2])), host="127.0.0.1", port=int(argv[1]), log_level="warning",
                access_log=False, loop="uvloop", http="httptools", lifespan="on")


if __name__ == "__main__":
    main(sys.argv[1:])
