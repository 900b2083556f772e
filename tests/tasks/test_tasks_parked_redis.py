"""Issue 37 item 5 on the Redis task store: a write wakes only its own task's keeper (through
the change feed, on every replica), leases are renewed in one pipeline, and creating many tasks
at once waits for a pooled connection instead of failing."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

import pytest

from rondo.tasks import RedisTaskStore, TaskRecord  # noqa: E402
from tests.helpers import redis_server  # noqa: E402
from tests.helpers.tasks_helpers import Peer, accept  # noqa: E402
from tests.tasks.test_tasks_parked import park, parked_server  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def redis_url():
    with redis_server.running() as url:
        yield url


def record(task_id: str, lease: float | None = None) -> TaskRecord:
    now = time.time()
    return TaskRecord(id=task_id, principal=None, created=now, updated=now, ttl_ms=60_000,
                      poll_ms=100, lease=lease)


def test_many_tasks_created_at_once_wait_for_a_connection(redis_url) -> None:
    # Before: 300 creates at once asked redis-py's pool for 300 connections and got
    # MaxConnectionsError past its 100.
    async def go() -> int:
        store = RedisTaskStore(redis_url, prefix="bulk:", max_connections=8)
        try:
            await asyncio.gather(*(store.create(record(f"b{i}")) for i in range(300)))
            found = await asyncio.gather(*(store.get(f"b{i}") for i in range(300)))
            return sum(r is not None for r in found)
        finally:
            await store.aclose()

    assert asyncio.run(go()) == 300
    with pytest.raises(ValueError, match="max_connections"):
        RedisTaskStore(redis_url, max_connections=1)


def test_a_write_on_one_replica_wakes_only_that_tasks_listeners_on_another(redis_url) -> None:
    async def go() -> Counter[str]:
        here = RedisTaskStore(redis_url, prefix="feed:")
        there = RedisTaskStore(redis_url, prefix="feed:")
        woken: Counter[str] = Counter()
        try:
            for task_id in ("t1", "t2", "last"):
                await there.create(record(task_id, lease=time.time() + 30))
            stops = [here.on_change(task_id, lambda t=task_id: woken.update([t]))
                     for task_id in ("t1", "t2", "last")]
            async with asyncio.timeout(10):  # subscribed: it wakes every listener once
                while sum(woken.values()) < 3:
                    await asyncio.sleep(0.01)
            woken.clear()

            def touch(rec: TaskRecord) -> bool:
                rec.message = "changed"
                return True

            await there.modify("t1", touch)
            await there.modify("last", touch)  # changes arrive in order: "last" comes after t1
            async with asyncio.timeout(10):
                while not woken["last"]:
                    await asyncio.sleep(0.01)
            for stop in stops:
                stop()
            return woken
        finally:
            await here.aclose()
            await there.aclose()

    woken = asyncio.run(go())
    assert woken == Counter({"t1": 1, "last": 1})  # t2 was not written: not woken


def test_leases_are_renewed_in_one_pipeline_and_survive_the_next_write(redis_url) -> None:
    async def go() -> tuple[list[str], float | None, float | None]:
        store = RedisTaskStore(redis_url, prefix="lease:")
        try:
            start = time.time()
            await store.create(record("l1", lease=start + 1))
            missed = await store.renew_many(["l1", "gone"], start + 100)
            renewed = await store.get("l1")

            def touch(rec: TaskRecord) -> bool:
                rec.message = "still here"
                return True

            await store.modify("l1", touch)
            after_write = await store.get("l1")
            assert renewed is not None and after_write is not None
            return missed, renewed.lease, after_write.lease
        finally:
            await store.aclose()

    missed, renewed, after_write = asyncio.run(go())
    assert missed == ["gone"]
    assert renewed is not None and after_write == renewed  # the write kept the renewed lease


def test_parked_tasks_on_redis_wake_only_for_their_own_answers(redis_url) -> None:
    class Counting(RedisTaskStore):
        def __init__(self, *args: Any, **kw: Any) -> None:
            super().__init__(*args, **kw)
            self.reads: Counter[str] = Counter()

        async def get(self, task_id: str) -> TaskRecord | None:
            self.reads[task_id] += 1
            return await super().get(task_id)

    store = Counting(redis_url, prefix="parked:")
    server = parked_server(store, watch_interval=3600.0, lease=3600.0)

    async def main() -> tuple[list[str], Counter[str], Counter[str]]:
        async with server.started():  # its stop ends the 19 parked tasks while the store is open
            peer = Peer(server)
            ids = await park(peer, 20)
            before = Counter(store.reads)
            await peer.result("tasks/update", {"taskId": ids[0], "inputResponses": {"name": accept(name="ada")}})
            done = await peer.until(ids[0])
            assert done["result"]["content"][0]["text"] == "hello ada"
            after = Counter(store.reads)
        await store.aclose()
        return ids, before, after

    ids, before, after = asyncio.run(main())
    woken = [task_id for task_id in ids[1:] if after[task_id] != before[task_id]]
    assert woken == [], f"{len(woken)} other tasks' keepers read their task after one answer"
