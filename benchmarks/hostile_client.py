"""Hostile servers against rondo's client (issue 37, defects 1 and 2), measured by hand:

    .venv/bin/python benchmarks/hostile_client.py bomb-json   # peak RSS, `gzip, gzip` JSON answer
    .venv/bin/python benchmarks/hostile_client.py bomb-sse    # the same bomb as an SSE answer
    .venv/bin/python benchmarks/hostile_client.py line MiB    # CPU for a newline-free SSE line

Each run starts a raw asyncio HTTP server on loopback, sends one request through
`HttpTransport`, and prints what the client ended with (its error) and the figure. The RSS is
the process's peak (`ru_maxrss`), so run one case per process. Figures are in docs/limits.md.
"""

from __future__ import annotations

import asyncio
import gzip
import resource
import sys
import time
import zlib
from pathlib import Path
from typing import Any

from rondo.client.transports.http import HttpTransport
from rondo.wire.meta import PROTOCOL_VERSION

CACHE = Path(__file__).resolve().parent.parent / ".cache" / "bomb-2g.gz.gz"


def bomb(size: int = 2 << 30) -> bytes:
    """`size` bytes of spaces, gzipped twice (a few kilobytes)."""
    if CACHE.exists():
        return CACHE.read_bytes()
    z = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = b" " * (1 << 20)
    inner = bytearray()
    for _ in range(size >> 20):
        inner += z.compress(block)
    inner += z.flush()
    data = gzip.compress(bytes(inner), 9)
    CACHE.parent.mkdir(exist_ok=True)
    CACHE.write_bytes(data)
    return data


async def serve(head: bytes, body_chunks: Any) -> tuple[asyncio.AbstractServer, int]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raw = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in raw.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        await reader.readexactly(length)
        writer.write(head)
        try:
            async for chunk in body_chunks():
                writer.write(chunk)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def one_request(port: int) -> str:
    transport = HttpTransport(f"http://127.0.0.1:{port}/mcp")

    async def incoming(message: Any) -> None:
        return None

    await transport.start(incoming)
    message = {"jsonrpc": "2.0", "id": 1, "method": "ping",
               "params": {"_meta": {PROTOCOL_VERSION: "2026-07-28"}}}
    try:
        await transport.request(message)
        return "answered"
    except Exception as exc:  # the figure is what it cost; the error is printed
        return f"{type(exc).__name__}: {str(exc)[:100]}"
    finally:
        await transport.close()


async def main(case: str, arg: str | None) -> None:
    if case in ("bomb-json", "bomb-sse"):
        data = bomb()
        ctype = b"application/json" if case == "bomb-json" else b"text/event-stream"
        head = (b"HTTP/1.1 200 OK\r\nContent-Type: " + ctype + b"\r\nContent-Encoding: gzip, gzip\r\n"
                b"Content-Length: " + str(len(data)).encode() + b"\r\nConnection: close\r\n\r\n")

        async def chunks() -> Any:
            yield data

        server, port = await serve(head, chunks)
        started = time.perf_counter()
        outcome = await one_request(port)
        took = time.perf_counter() - started
        server.close()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{case}: {len(data)} bytes on the wire -> {outcome}; peak RSS {rss:.0f} MB, {took:.2f} s")
    elif case == "line":
        mib = int(arg or "64")
        head = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                b"Connection: close\r\n\r\ndata: ")

        async def line() -> Any:
            piece = b"x" * 65536
            for _ in range(mib * 16 + 16):  # past the 64 MiB default by one MiB at 64
                yield piece

        server, port = await serve(head, line)
        cpu = time.process_time()
        outcome = await one_request(port)
        took = time.process_time() - cpu
        server.close()
        print(f"line {mib} MiB: {outcome}; client CPU {took:.2f} s")
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "", sys.argv[2] if len(sys.argv) > 2 else None))
