"""When the server stops (the end of its lifespan), nothing of the tasks extension is left
pending: a question withdrawn because its task was cancelled is awaited (or, past
`stop_timeout`, cancelled), a task still running is failed as stopped, and a withdrawal's
failure is logged without its text instead of being lost.

Before: the withdrawal ran under `asyncio.shield` with nothing holding it; when the server
stopped it could still be pending, and once its event loop closed it was collected later
("Task was destroyed but it is pending", "coroutine 'Keeper.withdraw' was never awaited")."""

from __future__ import annotations

import asyncio
import gc
import logging
from typing import Any

import pytest

from rondo.tasks import MemoryTaskStore, TaskRecord, Tasks  # noqa: E402
from rondo.tasks.store import Change  # noqa: E402
from tests.helpers.tasks_helpers import Peer  # noqa: E402
from tests.tasks.test_tasks_parked import park, parked_server  # noqa: E402

SECRET = "redis://:hunter2@db.internal:6379/0"


class Gate:
    """A store that holds each withdrawal (the keeper's write that takes a question back)
    until `gate` opens; then it takes a few turns of the loop, as a write over the network
    does, and writes (or raises `fail`)."""

    def __init__(self, *args: Any, fail: Exception | None = None, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.gate = asyncio.Event()
        self.entered = asyncio.Event()
        self.withdrawn = 0
        self.fail = fail

    async def modify(self, task_id: str, change: Change) -> TaskRecord | None:
        if not change.__qualname__.startswith("Keeper.withdraw."):
            return await super().modify(task_id, change)  # type: ignore[misc,no-any-return]
        self.entered.set()
        await self.gate.wait()
        for _ in range(10):
            await asyncio.sleep(0)
        if self.fail is not None:
            raise self.fail
        record: TaskRecord | None = await super().modify(task_id, change)  # type: ignore[misc]
        self.withdrawn += 1
        return record


class GatedStore(Gate, MemoryTaskStore):
    pass


def others() -> list[asyncio.Task[Any]]:
    """The loop's tasks but the one asking."""
    return [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]


async def cancel_and_hold(peer: Peer, store: Gate) -> str:
    """Park one task, cancel it, and return once its withdrawal is under way (held)."""
    [task_id] = await park(peer, 1)
    await peer.result("tasks/cancel", {"taskId": task_id})
    async with asyncio.timeout(5):
        await store.entered.wait()
    return task_id


def test_a_withdrawal_under_way_is_awaited_before_the_server_stops() -> None:
    store = GatedStore()
    server = parked_server(store, watch_interval=3600.0, lease=3600.0)

    async def main() -> tuple[int, list[asyncio.Task[Any]], TaskRecord | None]:
        async with server.started():
            task_id = await cancel_and_hold(Peer(server), store)
            assert store.withdrawn == 0
            store.gate.set()  # it goes on now, and needs ten more turns of the loop
        # The lifespan has ended: the withdrawal must be done, and nothing else left running.
        return store.withdrawn, others(), await store.get(task_id)

    withdrawn, left, record = asyncio.run(main())
    assert withdrawn == 1
    assert left == []
    assert record is not None and record.status == "cancelled" and record.requests == {}


def test_a_withdrawal_that_never_ends_is_cancelled_at_stop_timeout(caplog: pytest.LogCaptureFixture) -> None:
    store = GatedStore()  # its gate never opens
    server = parked_server(store, watch_interval=3600.0, lease=3600.0)
    tasks = server.extensions["io.modelcontextprotocol/tasks"]
    assert isinstance(tasks, Tasks)
    tasks.stop_timeout = 0.2

    async def main() -> tuple[list[asyncio.Task[Any]], float]:
        loop = asyncio.get_running_loop()
        async with server.started():
            await cancel_and_hold(Peer(server), store)
            stopping = loop.time()
        return others(), loop.time() - stopping

    with caplog.at_level(logging.WARNING, logger="rondo.tasks"):
        left, took = asyncio.run(main())
    assert left == []
    assert store.withdrawn == 0
    assert 0.2 <= took < 5.0  # bounded: stop_timeout, then the cancellation's grace at most
    assert "1 tasks or store writes were still running 0.2 s into the server's stop" in caplog.text


def test_a_failed_withdrawal_is_logged_without_its_text_and_the_task_ends_cancelled(
        caplog: pytest.LogCaptureFixture) -> None:
    store = GatedStore(fail=ConnectionError(f"lost {SECRET}"))
    store.gate.set()
    server = parked_server(store, watch_interval=3600.0, lease=3600.0)
    unretrieved: list[dict[str, Any]] = []

    async def main() -> tuple[str, dict[str, Any], list[asyncio.Task[Any]]]:
        asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: unretrieved.append(ctx))
        async with server.started():
            peer = Peer(server)
            task_id = await cancel_and_hold(peer, store)
            done = await peer.until(task_id)
        gc.collect()  # a task whose exception nobody retrieved would be reported now
        return task_id, done, others()

    with caplog.at_level(logging.WARNING, logger="rondo.tasks"):
        task_id, done, left = asyncio.run(main())
    # Before: its exception took the cancellation's place in the runner, logged as the task
    # failing (with its text); a withdrawal nobody awaited any more lost it altogether.
    assert done["status"] == "cancelled"
    assert left == [] and unretrieved == []
    assert f"could not withdraw a question of task {task_id[:6]}… (ConnectionError)" in caplog.text
    assert "hunter2" not in caplog.text and task_id not in caplog.text


def test_a_task_still_running_when_the_server_stops_is_failed_as_stopped() -> None:
    store = MemoryTaskStore()
    server = parked_server(store, watch_interval=3600.0, lease=3600.0)

    async def main() -> tuple[list[TaskRecord | None], list[asyncio.Task[Any]]]:
        async with server.started():
            ids = await park(Peer(server), 3)
        return [await store.get(task_id) for task_id in ids], others()

    records, left = asyncio.run(main())
    assert left == []  # runners, keepers and the lease timer all ended
    stopped = "The worker running this task stopped (its server shut down)"
    for record in records:
        assert record is not None and record.status == "failed" and record.requests == {}
        assert record.error == {"code": -32603, "message": stopped} and record.message == stopped


def test_stop_timeout_must_be_positive() -> None:
    for bad in (0, -1.0, True, "5"):
        with pytest.raises(ValueError, match="stop_timeout must be a positive number"):
            Tasks(stop_timeout=bad)  # type: ignore[arg-type]


@pytest.mark.slow
def test_on_redis_a_withdrawal_under_way_is_awaited_and_nothing_is_left(
        recwarn: pytest.WarningsRecorder) -> None:
    # The integration tier once printed this defect: on the Redis store a cancelled question's
    # withdrawal was still pending when a test's loop closed, and collected in a later test.
    from rondo.tasks import RedisTaskStore
    from tests.helpers import redis_server

    class GatedRedis(Gate, RedisTaskStore):
        pass

    gc.collect()  # what earlier tests left is not this test's
    recwarn.clear()
    with redis_server.running() as url:
        store = GatedRedis(url, prefix="stop:")
        server = parked_server(store, watch_interval=3600.0, lease=3600.0)  # type: ignore[arg-type]

        async def main() -> tuple[int, list[asyncio.Task[Any]], TaskRecord | None]:
            async with server.started():
                task_id = await cancel_and_hold(Peer(server), store)
                store.gate.set()
            withdrawn, left = store.withdrawn, others()
            record = await store.get(task_id)
            await store.aclose()
            return withdrawn, left, record

        withdrawn, left, record = asyncio.run(main())
        gc.collect()
    assert withdrawn == 1
    assert left == []
    assert record is not None and record.status == "cancelled" and record.requests == {}
    unwanted = (RuntimeWarning, ResourceWarning, pytest.PytestUnraisableExceptionWarning)
    assert [str(w.message) for w in recwarn.list if issubclass(w.category, unwanted)] == []


@pytest.mark.slow
def test_on_redis_parked_tasks_end_at_stop_without_waiting_out_the_timeout(
        caplog: pytest.LogCaptureFixture) -> None:
    # Before: the keepers' watch could miss the cancellation meant to end it (inside a Redis
    # read) and sleep on, so the stop waited its whole `stop_timeout` and cancelled them.
    from rondo.tasks import RedisTaskStore
    from tests.helpers import redis_server

    with redis_server.running() as url:
        store = RedisTaskStore(url, prefix="park-stop:")
        server = parked_server(store, watch_interval=3600.0, lease=3600.0)

        async def main() -> tuple[list[TaskRecord | None], list[asyncio.Task[Any]]]:
            async with server.started():
                ids = await park(Peer(server), 5)
            left = others()
            records = [await store.get(task_id) for task_id in ids]
            await store.aclose()
            return records, left

        with caplog.at_level(logging.WARNING, logger="rondo.tasks"):
            records, left = asyncio.run(main())
    assert left == []
    assert "still running" not in caplog.text
    assert [r.status if r is not None else None for r in records] == ["failed"] * 5


class SilentServer:
    """A client whose server says its task is working and never answers `tasks/cancel`."""

    def __init__(self) -> None:
        self.polled = asyncio.Event()
        self.gave_up = False

    async def request(self, method: str, params: Any = None, **kw: Any) -> dict[str, Any]:
        task = {"taskId": "t1", "status": "working", "pollIntervalMs": 10}
        if method == "tools/call":
            return {"task": task}  # a 2025-11-25 task
        if method == "tasks/get":
            self.polled.set()
            return task
        assert method == "tasks/cancel"
        try:
            await asyncio.Event().wait()  # no answer, ever
        finally:
            self.gave_up = True
        raise AssertionError("unreachable")


@pytest.mark.parametrize("shape", ["handle", "legacy"])
def test_a_client_gives_up_on_an_unanswered_cancel_and_leaves_nothing_running(
        shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: the tasks/cancel sent when the awaiting code was cancelled ran under
    # asyncio.shield inside a timeout; past the timeout it was left running, unowned.
    from rondo.tasks import client as tasks_client

    monkeypatch.setattr(tasks_client, "CANCEL_TIMEOUT", 0.05)
    server = SilentServer()

    async def main() -> tuple[bool, list[asyncio.Task[Any]]]:
        if shape == "handle":
            waiting = asyncio.ensure_future(tasks_client.TaskHandle(server, "t1").wait_raw())  # type: ignore[arg-type]
        else:
            waiting = asyncio.ensure_future(tasks_client.legacy_call(server, {"name": "x"}, None))  # type: ignore[arg-type]
        async with asyncio.timeout(5):
            await server.polled.wait()  # in its poll loop: the code awaiting the task gives up
            waiting.cancel()
            await asyncio.wait({waiting})
        return waiting.cancelled(), others()

    cancelled, left = asyncio.run(main())
    assert cancelled  # the caller's cancellation stands
    assert left == []
    assert server.gave_up  # the unanswered request was cancelled, not left behind
