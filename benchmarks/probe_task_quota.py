"""Issue 37 item 6: can one principal's unfinished tasks lock every other principal out?

In one process: "alice" starts tasks that wait for an answer (the default `MemoryTaskStore`)
until one is refused or 12,000 are running; then "bob" starts one. Prints how many alice got,
her refusal, and bob's answer.

    .venv/bin/python benchmarks/probe_task_quota.py
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import rondo
from rondo import elicit
from rondo.tasks import Tasks
from rondo.testing import connect

TASKS = "io.modelcontextprotocol/tasks"
CAPS = {"elicitation": {"form": {}}, "extensions": {TASKS: {}}}
ids = itertools.count(1)


def call() -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": CAPS}
    return {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call",
            "params": {"name": "wait", "arguments": {}, "_meta": meta}}


async def main() -> None:
    server = rondo.Server("quota")
    server.extension(Tasks(principal=lambda ctx: ctx.auth))

    @server.tool(task="optional")
    async def wait(ctx: rondo.Context) -> str:
        """Start a task that waits for an answer."""
        await ctx.start_task()
        await ctx.ask("q", elicit.form("Name?", {"type": "object", "properties": {"n": {"type": "string"}}}))
        return "answered"

    alice, bob = connect(server, auth="alice"), connect(server, auth="bob")
    started, refusal = 0, None
    while started < 12_000:
        answer = await alice.send(call())
        assert answer is not None
        if "error" in answer:
            refusal = answer["error"]
            break
        started += 1
    print(f"alice started {started:,} tasks; then {refusal}")
    answer = await bob.send(call())
    assert answer is not None
    print("bob:", answer.get("error") or answer["result"]["resultType"])


if __name__ == "__main__":
    asyncio.run(main())
