"""Issue 37 item 5: what do parked tasks cost a server that is otherwise idle?

In one process, over the in-memory transport: one client parks N tasks (each asks a question
nobody answers, so it waits at input_required), then the probe measures the process's CPU share
while idle for 2 s (`--idle=S`), the time to create one more task (median of 20), and another client's
median latency for a plain tool call (of 50). With `--redis` the tasks live in a
`RedisTaskStore` on a redis-server this probe starts on a loopback port.

    .venv/bin/python benchmarks/probe_parked_tasks.py 250 1000 2000 [--redis] [--idle=20]
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import statistics
import sys
import time
from collections.abc import Iterator
from typing import Any

from loopback_redis import loopback_redis  # a sibling: benchmarks/ is sys.path[0]

import rondo
from rondo import elicit
from rondo.tasks import MemoryTaskStore, Tasks
from rondo.testing import connect

TASKS = "io.modelcontextprotocol/tasks"
CAPS = {"elicitation": {"form": {}}, "extensions": {TASKS: {}}}
ids = itertools.count(1)
IDLE = 2.0  # seconds measured idle; --idle=S (leases are renewed every 10 s: use 20 to see it)


def call(name: str) -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": CAPS}
    return {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call",
            "params": {"name": name, "arguments": {}, "_meta": meta}}


def make_server(store: Any) -> rondo.Server:
    server = rondo.Server("parked")
    if store is None:
        try:  # one client parks them all: lift its quota (issue 37 item 6), not measured here
            store = MemoryTaskStore(max_per_client=10_000)
        except TypeError:  # a rondo from before the quota
            store = MemoryTaskStore()
    server.extension(Tasks(store=store))

    @server.tool(task="optional")
    async def parked(ctx: rondo.Context) -> str:
        """Start a task and wait for an answer that never comes."""
        await ctx.start_task()
        await ctx.ask("q", elicit.form("Name?", {"type": "object", "properties": {"n": {"type": "string"}}}))
        return "answered"

    @server.tool
    def plain() -> str:
        """Answer at once."""
        return "ok"

    return server


async def level(n: int, store: Any) -> str:
    server = make_server(store)
    owner, other = connect(server), connect(server)
    for _ in range(n):
        answer = await owner.send(call("parked"))
        assert answer is not None and answer["result"]["resultType"] == "task", answer
    await asyncio.sleep(1.0)  # settle: every task reached its question
    cpu0, wall0 = time.process_time(), time.perf_counter()
    await asyncio.sleep(IDLE)
    idle = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
    creates = []
    for _ in range(20):
        t0 = time.perf_counter()
        await owner.send(call("parked"))
        creates.append(time.perf_counter() - t0)
    plains = []
    for _ in range(50):
        t0 = time.perf_counter()
        await other.send(call("plain"))
        plains.append(time.perf_counter() - t0)
    return (f"{n:>5} parked: idle CPU {idle * 100:5.1f}%, create {statistics.median(creates) * 1000:7.2f} ms, "
            f"other client's call {statistics.median(plains) * 1000:6.2f} ms")


@contextlib.contextmanager
def redis_url() -> Iterator[str]:
    with loopback_redis() as (url, _):
        yield url


def main() -> None:
    counts = [int(a) for a in sys.argv[1:] if a.isdigit()] or [250, 1000, 2000]
    use_redis = "--redis" in sys.argv
    global IDLE
    for arg in sys.argv[1:]:
        if arg.startswith("--idle="):
            IDLE = float(arg.split("=", 1)[1])
    with redis_url() if use_redis else contextlib.nullcontext() as url:
        for n in counts:
            store = None
            if url is not None:
                from rondo.tasks import RedisTaskStore

                try:
                    store = RedisTaskStore(url, prefix=f"probe{n}:", max_per_client=10_000)
                except TypeError:
                    store = RedisTaskStore(url, prefix=f"probe{n}:")
            print(asyncio.run(level(n, store)), flush=True)


if __name__ == "__main__":
    main()
