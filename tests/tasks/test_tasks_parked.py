"""Issue 37 item 5: parked tasks cost nothing while nothing happens to them, and a write wakes
only the task it concerns (no keeper polls; leases are renewed for all tasks at once)."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import rondo  # noqa: E402
from rondo.tasks import MemoryTaskStore, TaskRecord, Tasks  # noqa: E402
from tests.helpers.tasks_helpers import Peer, accept, form  # noqa: E402


class CountingStore(MemoryTaskStore):
    """Counts the reads of each task: a keeper reads its task once per wake-up."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: Counter[str] = Counter()

    async def get(self, task_id: str) -> TaskRecord | None:
        self.reads[task_id] += 1
        return await super().get(task_id)


def parked_server(store: MemoryTaskStore, **options: Any) -> rondo.Server:
    server = rondo.Server("parked")
    server.extension(Tasks(store=store, **options))

    @server.tool(task="optional")
    async def ask_name(ctx: rondo.Context) -> str:
        """Starts a task that waits for a name."""
        await ctx.start_task()
        name = (await ctx.ask("name", form("name"))).content["name"]
        return f"hello {name}"

    return server


async def park(peer: Peer, n: int) -> list[str]:
    ids = []
    for _ in range(n):
        created = await peer.tool("ask_name")
        assert created["resultType"] == "task"
        ids.append(created["taskId"])
    for task_id in ids:
        await peer.until(task_id, "input_required")
    return ids


def test_an_answer_wakes_only_the_task_it_answers() -> None:
    # Before: every store write woke every keeper, each of which read its task again.
    store = CountingStore()
    # Long intervals: the old keepers' polling cannot blur what a write wakes.
    server = parked_server(store, watch_interval=3600.0, lease=3600.0)

    async def main() -> tuple[list[str], Counter[str], Counter[str]]:
        peer = Peer(server)
        ids = await park(peer, 20)
        await asyncio.sleep(0)
        before = Counter(store.reads)
        await peer.result("tasks/update", {"taskId": ids[0], "inputResponses": {"name": accept(name="ada")}})
        done = await peer.until(ids[0])
        assert done["result"]["content"][0]["text"] == "hello ada"
        return ids, before, Counter(store.reads)

    ids, before, after = asyncio.run(main())
    woken = [task_id for task_id in ids[1:] if after[task_id] != before[task_id]]
    assert woken == [], f"{len(woken)} other tasks' keepers woke for one answer"
    assert after[ids[0]] > before[ids[0]]


def test_idle_parked_tasks_hold_no_timers_of_their_own() -> None:
    # Before: each keeper slept in a wait with a timeout (watch_interval, 0.25 s), so N parked
    # tasks meant N timers firing four times a second. Now the loop's timers do not grow with N.
    server = parked_server(MemoryTaskStore())

    async def main() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        peer = Peer(server)
        await park(peer, 5)
        few = len(loop._scheduled)  # type: ignore[attr-defined]  # the loop's pending timers
        await park(peer, 50)
        many = len(loop._scheduled)  # type: ignore[attr-defined]
        return few, many

    few, many = asyncio.run(main())
    assert many == few, f"timers grew from {few} to {many} with 50 more parked tasks"


def test_one_heartbeat_keeps_every_parked_task_alive_past_its_own_lease() -> None:
    # The renewal does not grow with the number of tasks: each third of the lease the worker
    # writes one heartbeat; no task's own lease is touched until the rare sweep.
    class Counting(MemoryTaskStore):
        def __init__(self) -> None:
            super().__init__()
            self.beats = 0
            self.sweeps = 0

        async def beat(self, worker: str, until: float) -> None:
            self.beats += 1
            await super().beat(worker, until)

        async def renew_many(self, task_ids: Any, until: float) -> list[str]:
            self.sweeps += 1
            return await super().renew_many(task_ids, until)

    store = Counting()
    server = parked_server(store, lease=3.0)  # a heartbeat every 1 s; a loaded machine may be late by up to 2 s

    async def main() -> list[str]:
        peer = Peer(server)
        ids = await park(peer, 10)
        async with asyncio.timeout(20):
            while store.beats < 4:  # 4 s: every task's own lease (3 s) has run out
                await asyncio.sleep(0.05)
        return [(await peer.get(task_id))["status"] for task_id in ids]

    statuses = asyncio.run(main())
    assert statuses == ["input_required"] * 10  # alive: the worker's heartbeat stands for them
    assert store.sweeps == 0
