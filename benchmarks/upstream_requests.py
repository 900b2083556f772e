"""What makes the upstream (benchmarks/server.py) cost more per `add` behind the proxy: the
request's bytes, or how the requests arrive.

    .venv/bin/python benchmarks/upstream_requests.py bytes wrk|proxy|proxy-body N
    .venv/bin/python benchmarks/upstream_requests.py arrival

`bytes` feeds one exact request N times (5 rounds, after 300 warm-up) through the HTTP protocol
the server is served with, in process (inprocess.py's stand-in transport), and prints CPU µs
per request; under callgrind (run it with N = 100 and 300 and take the difference over 1,000
requests) it gives instructions per request. `wrk` is the request wrk sends (post.lua with
run.py's body and headers), `proxy` the one the proxy's `Http11Pool` sends for a relayed
`add` (captured off the socket: `User-Agent` and `Accept-Encoding` headers, compact JSON with
`clientInfo` in `_meta`), `proxy-body` the proxy's body under wrk's headers.

`arrival` serves the fixture on CPU 0 and loads it with wrk (post.lua, wrk's own request) on
CPU 1 for 3 s at a time, with two connections (two requests in flight, as bench_proxy.py's
direct rows) and then one (one request at a time, as the upstream mostly sees behind the
proxy), twice, and prints the server's user and system CPU µs per request from /proc.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run  # noqa: E402
from inprocess import best_of_five, feed, load, protocol_for  # noqa: E402

WRK_BODY = (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", '
            b'"arguments": {"a": 1, "b": 2}, "_meta": {"io.modelcontextprotocol/protocolVersion": '
            b'"2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}}')
PROXY_BODY = (b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":'
              b'{"a":1,"b":2},"_meta":{"io.modelcontextprotocol/clientCapabilities":{},'
              b'"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
              b'"io.modelcontextprotocol/clientInfo":{"name":"rondo-proxy","version":"0.1.0"}}}}')
WRK_HEAD = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nContent-Length: %d\r\n"
            b"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            b"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: add\r\n\r\n")
PROXY_HEAD = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:42999\r\nUser-Agent: rondo\r\n"
              b"Content-Length: %d\r\nContent-Type: application/json\r\n"
              b"Accept: application/json, text/event-stream\r\nAccept-Encoding: gzip, deflate\r\n"
              b"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: add\r\n\r\n")
REQUESTS = {
    "wrk": WRK_HEAD % len(WRK_BODY) + WRK_BODY,
    "proxy": PROXY_HEAD % len(PROXY_BODY) + PROXY_BODY,
    "proxy-body": WRK_HEAD % len(PROXY_BODY) + PROXY_BODY,
}


async def in_process(raw: bytes, n: int) -> None:
    protocol, transport = protocol_for("rondo", load("rondo"))  # served as `serve()` serves

    async def one() -> None:
        assert b'"3"' in await feed(protocol, transport, raw)

    best = await best_of_five(one, n, warm=300, clock=time.process_time)
    print(f"upstream CPU per request: {best:.1f} us (best of 5 x {n})")


def cpu(pid: int) -> tuple[int, int]:
    fields = Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()
    return int(fields[11]), int(fields[12])


def arrival() -> None:
    tick = os.sysconf("SC_CLK_TCK")
    port = run.free_port()
    server = subprocess.Popen(["taskset", "-c", "0", sys.executable, str(HERE / "server.py"),
                               "http", str(port)], stderr=subprocess.DEVNULL)
    try:
        run.wait_http_ready(port, server)
        env = {**os.environ, **run.wrk_envs()[0]}
        for connections in (2, 1, 2, 1):
            user, system = cpu(server.pid)
            out = subprocess.run(
                ["taskset", "-c", "1", "wrk", f"-t{connections}", f"-c{connections}", "-d3s",
                 "-s", str(HERE / "wrk" / "post.lua"), f"http://127.0.0.1:{port}/mcp"],
                env=env, capture_output=True, text=True, check=True).stdout
            user2, system2 = cpu(server.pid)
            found = re.search(r"(\d+) requests in", out)
            assert found is not None, out
            n = int(found.group(1))
            print(f"wrk -c{connections}: {n} requests, server user "
                  f"{(user2 - user) / tick / n * 1e6:.1f} us + system "
                  f"{(system2 - system) / tick / n * 1e6:.1f} us per request")
    finally:
        server.terminate()
        server.wait()


def main(argv: list[str]) -> None:
    if argv[:1] == ["arrival"]:
        arrival()
    elif len(argv) == 3 and argv[0] == "bytes" and argv[1] in REQUESTS:
        import uvloop

        uvloop.install()
        asyncio.run(in_process(REQUESTS[argv[1]], int(argv[2])))
    else:
        raise SystemExit("usage: upstream_requests.py bytes wrk|proxy|proxy-body N | arrival")


if __name__ == "__main__":
    main(sys.argv[1:])
