"""The proxy's upstream link alone: CPU per relayed `add` on the client side, by layer.

    .venv/bin/python benchmarks/upstream_link.py [N] [--profile LAYER]

The upstream is benchmarks/server.py over HTTP in its own process; this process holds only the
client side, so its CPU time (`time.process_time`) is the link's own. Layers, each the whole
of the one below plus its own work:

- `socket`: the request bytes written and the answer read on a blocking socket (the floor:
  the kernel's loopback work and nothing else);
- `pool`: `Http11Pool.post` and the answer's body read, on the event loop;
- `transport`: `HttpTransport.request` (the envelope's JSON, headers, the answer decoded);
- `client`: `Client.resume(PendingCall, manual=True)`, as `gateway/proxy.py`'s relay calls it.

Runs on uvloop, the loop `rondo proxy` serves on (`--asyncio`: the stdlib's). Prints CPU µs per
call for each (best of 5 x N); `--only LAYER` runs one of the last three
(`bash benchmarks/link_instructions.sh LAYER` counts its instructions under callgrind);
`--profile LAYER` adds a cProfile of that
layer timed by process CPU (not wall time: a loopback send on a shared core shows the
upstream's work in wall time).
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from inprocess import best_of_five  # noqa: E402
from run import free_port, wait_http_ready  # noqa: E402

from rondo.client import Client  # noqa: E402
from rondo.client.transports.http import HttpTransport  # noqa: E402
from rondo.client.transports.http11 import Http11Pool  # noqa: E402
from rondo.client.types import PendingCall  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
V = "2026-07-28"
PARAMS = {"name": "add", "arguments": {"a": 1, "b": 2},
          "_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
           "Accept-Encoding": "gzip, deflate", "MCP-Protocol-Version": V,
           "Mcp-Method": "tools/call", "Mcp-Name": "add"}


def message(rid: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {**PARAMS, "_meta": {**PARAMS["_meta"],
                                           "io.modelcontextprotocol/protocolVersion": V,
                                           "io.modelcontextprotocol/clientInfo":
                                               {"name": "rondo-proxy", "version": "0"}}}}


def socket_layer(port: int, n: int) -> float:
    body = json.dumps(message(1)).encode()
    head = "".join(f"{k}: {v}\r\n" for k, v in HEADERS.items())
    request = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    with socket.create_connection(("127.0.0.1", port)) as sock:
        def once() -> None:
            sock.sendall(request)
            data = b""
            while b"\r\n\r\n" not in data:
                data += sock.recv(65536)
            head, _, rest = data.partition(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            while len(rest) < length:
                rest += sock.recv(65536)
            assert b'"3"' in rest, rest
        for _ in range(200):
            once()
        best = float("inf")
        for _ in range(5):
            start = time.process_time()
            for _ in range(n):
                once()
            best = min(best, (time.process_time() - start) / n * 1e6)
    return best


async def timed(once: Callable[[], Awaitable[None]], n: int, profile: bool) -> float:
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile(time.process_time)
    best = await best_of_five(once, n, clock=time.process_time, profiler=profiler)
    if profiler is not None:
        import pstats

        stats = pstats.Stats(profiler)
        print(f"function calls per call: {stats.total_calls / (5 * n):.0f}")  # type: ignore[attr-defined]
        stats.sort_stats("ncalls" if "--ncalls" in sys.argv else "tottime").print_stats(80 if "--ncalls" in sys.argv else 25)
    return best


async def layers(port: int, n: int, profile: str | None) -> dict[str, float]:
    url = f"http://127.0.0.1:{port}/mcp"
    out: dict[str, float] = {}
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    pool = Http11Pool()
    body = json.dumps(message(1)).encode()

    async def pool_once() -> None:
        response = await pool.post(url, HEADERS, body)
        data = await response.aread()
        await response.aclose()
        assert b'"3"' in data

    if only in (None, "pool"):
        out["pool"] = await timed(pool_once, n, profile == "pool")
    await pool.aclose()

    transport = HttpTransport(url, http_transport=Http11Pool())

    async def ignore(_: Any) -> None:
        return None

    await transport.start(ignore)
    ids = iter(range(1, 1 << 60))

    async def transport_once() -> None:
        answer = await transport.request(message(next(ids)))
        assert answer["result"]["content"][0]["text"] == "3"

    if only in (None, "transport"):
        out["transport"] = await timed(transport_once, n, profile == "transport")
    await transport.close()

    link = HttpTransport(url, http_transport=Http11Pool())
    async with Client(link, protocol=V, name="rondo-proxy", timeout=30.0, max_timeout=30.0) as client:
        async def client_once() -> None:
            pending = PendingCall(method="tools/call", params=dict(PARAMS), request_state=None)
            result = await client.resume(pending, {}, manual=True)
            assert result.content[0]["text"] == "3"

        if only in (None, "client"):
            out["client"] = await timed(client_once, n, profile == "client")
    return out


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0]) if args else 1000
    profile = sys.argv[sys.argv.index("--profile") + 1] if "--profile" in sys.argv else None
    port = free_port()
    up = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "server.py"), "http",
                           str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_http_ready(port, up)
        figures = {} if "--only" in sys.argv else {"socket": socket_layer(port, n)}
        if "--asyncio" in sys.argv:  # the stdlib loop; by default uvloop, as `rondo proxy` runs
            figures.update(asyncio.run(layers(port, n, profile)))
        else:
            import uvloop

            figures.update(uvloop.run(layers(port, n, profile)))
        for layer, us in figures.items():
            print(f"{layer:10s} {us:6.1f} us CPU per call (best of 5 x {n})")
    finally:
        up.terminate()
        up.wait()


if __name__ == "__main__":
    main()
