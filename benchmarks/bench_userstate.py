"""Cost of per-user state on a tool call: one `get` and one `set` per call, on the memory
store and on Redis, against the same call without state, in the same run.

Run: .venv/bin/python benchmarks/bench_userstate.py [--redis URL] [--calls N]
(without --redis it starts a throwaway redis-server on a loopback port, if one is installed).
Each figure is the best of several rounds of N sequential in-memory `tools/call`s.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import rondo
from rondo.auth.principal import Principal
from rondo.testing import connect
from rondo.userstate import MemoryStore, RedisStore, UserState

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}
ALICE = Principal.from_claims({"sub": "alice", "iss": "https://as.example"})


def make(store: Any | None) -> rondo.Server:
    server = rondo.Server("bench", state=None)
    if store is None:
        @server.tool
        async def count(ctx: rondo.Context) -> int:
            """Count without state."""
            return 1
    else:
        server.extension(UserState(store))

        @server.tool
        async def count(ctx: rondo.Context) -> int:
            """Count calls in per-user state: one read, one write."""
            n = await ctx.user_state.get("n", 0) + 1
            await ctx.user_state.set("n", n)
            return n  # type: ignore[no-any-return]
    return server


async def per_call_us(servers: list[rondo.Server], calls: int, rounds: int) -> list[float]:
    """Best µs per call of each server; the servers take turns within each round, so a load
    spike from other jobs hits them alike."""
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "count", "arguments": {}, "_meta": META}}
    conns = [connect(server, auth=ALICE) for server in servers]
    for conn in conns:
        reply = await conn.send(message)
        assert "result" in reply and not reply["result"].get("isError"), reply
    best = [float("inf")] * len(conns)
    for _ in range(rounds):
        for i, conn in enumerate(conns):
            start = time.perf_counter()
            for _ in range(calls):
                await conn.send(message)
            best[i] = min(best[i], time.perf_counter() - start)
    return [b / calls * 1e6 for b in best]


@contextlib.contextmanager
def throwaway_redis() -> Iterator[str | None]:
    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    workdir = tempfile.mkdtemp(prefix="rondo-bench-redis-")
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", workdir],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(5)
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--redis", metavar="URL")
    p.add_argument("--calls", type=int, default=500)
    p.add_argument("--rounds", type=int, default=20)
    args = p.parse_args(argv)
    with contextlib.ExitStack() as stack:
        url = args.redis or stack.enter_context(throwaway_redis())
        targets: list[tuple[str, Any]] = [("no state", None), ("memory", MemoryStore())]
        if url:
            targets.append(("redis", RedisStore(url, prefix="bench:")))
        else:
            print("redis: skipped (no redis-server and no --redis)")
        found = asyncio.run(per_call_us([make(store) for _, store in targets], args.calls,
                                        args.rounds))
        for (label, _), us in zip(targets, found, strict=True):
            print(f"{label:>8}: {us:7.1f} us per tools/call")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
