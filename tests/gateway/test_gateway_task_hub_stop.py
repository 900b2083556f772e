"""The tasks hub (gateway/task_hub.py) stops the tasks extension it made itself (the registered
default, made when the server's own task tool first runs) when the server stops, as that
extension's own lifespan would: a task still running ends failed as stopped, nothing pending."""

from __future__ import annotations

import asyncio
from typing import Any

import rondo
from rondo.gateway.task_hub import TaskRelays
from rondo.tasks import TaskRecord
from tests.helpers.tasks_helpers import Peer, form
from tests.tasks.test_tasks_parked import park


def test_the_default_tasks_the_hub_made_are_stopped_with_the_server() -> None:
    server = rondo.Server("hub")
    hub = TaskRelays()
    server.extension(hub)

    @server.tool(task="optional")
    async def ask_name(ctx: rondo.Context) -> str:
        """Starts a task that waits for a name."""
        await ctx.start_task()
        name = (await ctx.ask("name", form("name"))).content["name"]
        return f"hello {name}"

    async def main() -> tuple[list[TaskRecord | None], list[asyncio.Task[Any]]]:
        async with server.started():
            ids = await park(Peer(server), 2)
            assert hub.local is not None  # made on first need, attached to no server
        store = hub.local.store
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        return [await store.get(task_id) for task_id in ids], others

    records, left = asyncio.run(main())
    assert left == []  # its runners and keepers ended with the server
    stopped = "The worker running this task stopped (its server shut down)"
    assert [(r.status, r.message) for r in records if r is not None] == [("failed", stopped)] * 2
