"""Where tasks live: the `TaskStore` interface and the bounded in-memory store.

Every operation is a coroutine so a networked store (Redis, `redis_store.py`) fits the same
shape. `modify` is the one write after `create`: an atomic read-change-write, so a
`tasks/update` on one replica and the worker's own writes on another never lose each other's
changes. A store hands out copies: changing a record changes nothing until it is written.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Protocol, runtime_checkable

from .record import TaskRecord, decode, encode, too_many_for_client, too_many_on_server

Change = Callable[[TaskRecord], bool]
Wake = Callable[[], None]


@runtime_checkable
class TaskStore(Protocol):
    """`create` returns once a `get` anywhere would find the task (durable, consistent).
    `get` is None for an unknown or expired task. `modify(id, change)` runs `change` on a copy
    and writes it back atomically when `change` returns True; it returns the record as it now
    stands (None if gone). `wait(ids, timeout)` returns when one of those tasks may have
    changed, or after `timeout` seconds.

    Optional, for a store that serves many parked tasks cheaply (both rondo stores have them):
    `on_change(id, wake)` calls `wake()` (from any thread) after every write to that task until
    the function it returns is called, so a task's keeper sleeps until its own task changes
    instead of polling; `renew_many(ids, until)` moves the lease of every live, unfinished
    task among `ids` to `until` in one go, without waking anybody, and returns the ids it did
    not find; `beat(worker, until)` and `heartbeat(worker)` keep one expiry per worker, which
    stands in for the lease of every task that worker runs (`TaskRecord.worker`). Without them
    the keeper polls every `Tasks(watch_interval=...)` and each lease is renewed alone."""

    async def create(self, record: TaskRecord) -> None: ...

    async def get(self, task_id: str) -> TaskRecord | None: ...

    async def modify(self, task_id: str, change: Change) -> TaskRecord | None: ...

    async def wait(self, task_ids: Iterable[str], timeout: float) -> None: ...


class MemoryTaskStore:
    """Tasks of one process. Bounded: one client (`TaskRecord.client`: the principal, or an
    anonymous request's network peer) has at most `max_per_client` unfinished tasks, and at
    most `max_tasks` tasks are kept in all; expired tasks go first, then the oldest finished
    ones. A new task past either bound is refused (-32000 naming the limit) rather than
    dropping work somebody is waiting for. A write wakes only the waiters of the task it wrote."""

    def __init__(self, max_tasks: int = 10_000, *, max_per_client: int = 1_000,
                 clock: Callable[[], float] = time.time) -> None:
        for name, value in (("max_tasks", max_tasks), ("max_per_client", max_per_client)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer")
        self.max_tasks = max_tasks
        self.max_per_client = max_per_client
        self._unfinished: dict[str | None, set[str]] = {}  # client -> its unfinished tasks
        self._owner: dict[str, str | None] = {}  # unfinished task -> its client
        self._clock = clock
        self._tasks: OrderedDict[str, bytes] = OrderedDict()
        self._expiry: dict[str, float] = {}
        self._listeners: dict[str, list[Wake]] = {}
        self._beats: dict[str, float] = {}

    def __len__(self) -> int:
        return len(self._tasks)

    async def create(self, record: TaskRecord) -> None:
        self._evict()
        if len(self._unfinished.get(record.client, ())) >= self.max_per_client:
            raise too_many_for_client(self.max_per_client)
        if len(self._tasks) >= self.max_tasks:
            self._evict_finished()
        if len(self._tasks) >= self.max_tasks:
            raise too_many_on_server(self.max_tasks)  # the last resort: many clients at once
        self._put(record)

    async def get(self, task_id: str) -> TaskRecord | None:
        raw = self._live(task_id)
        return None if raw is None else decode(raw)

    async def modify(self, task_id: str, change: Change) -> TaskRecord | None:
        raw = self._live(task_id)
        if raw is None:
            return None
        record = decode(raw)
        if change(record):
            self._put(record)
        return record

    async def wait(self, task_ids: Iterable[str], timeout: float) -> None:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            loop.call_soon_threadsafe(_wake, fut)

        stops = [self.on_change(task_id, wake) for task_id in task_ids]
        try:
            await asyncio.wait_for(asyncio.shield(fut), timeout)
        except TimeoutError:
            pass
        finally:
            for stop in stops:
                stop()

    def on_change(self, task_id: str, wake: Wake) -> Callable[[], None]:
        listeners = self._listeners.setdefault(task_id, [])
        listeners.append(wake)

        def stop() -> None:
            with contextlib.suppress(ValueError):
                listeners.remove(wake)
            if not listeners and self._listeners.get(task_id) is listeners:
                del self._listeners[task_id]

        return stop

    async def beat(self, worker: str, until: float) -> None:
        self._beats[worker] = until
        if len(self._beats) > 64:  # workers come and go with their event loops
            now = self._clock()
            self._beats = {w: t for w, t in self._beats.items() if t > now or w == worker}

    async def heartbeat(self, worker: str) -> float | None:
        return self._beats.get(worker)

    async def renew_many(self, task_ids: Iterable[str], until: float) -> list[str]:
        """Returns the ids it did not renew: gone (expired) or finished."""
        missed = []
        for task_id in task_ids:
            raw = self._live(task_id)
            record = None if raw is None else decode(raw)
            if record is None or record.terminal:
                missed.append(task_id)
                continue
            record.lease = until
            self._put(record, wake=False)  # nobody waits for a lease to move
        return missed

    # -- internals ---------------------------------------------------------------------------

    def _put(self, record: TaskRecord, *, wake: bool = True) -> None:
        self._tasks[record.id] = encode(record)
        if record.terminal:
            self._finished(record.id)
        elif record.id not in self._owner:
            self._owner[record.id] = record.client
            self._unfinished.setdefault(record.client, set()).add(record.id)
        expires = record.expires_at()
        if expires is None:
            self._expiry.pop(record.id, None)
        else:
            self._expiry[record.id] = expires
        listeners = self._listeners.get(record.id) if wake else None
        if listeners:
            for listener in tuple(listeners):
                listener()

    def _live(self, task_id: str) -> bytes | None:
        raw = self._tasks.get(task_id)
        if raw is None:
            return None
        expires = self._expiry.get(task_id)
        if expires is not None and expires <= self._clock():
            self._drop(task_id)
            return None
        return raw

    def _finished(self, task_id: str) -> None:
        if task_id in self._owner:
            client = self._owner.pop(task_id)
            mine = self._unfinished[client]
            mine.discard(task_id)
            if not mine:
                del self._unfinished[client]

    def _drop(self, task_id: str) -> None:
        self._tasks.pop(task_id, None)
        self._expiry.pop(task_id, None)
        self._finished(task_id)
        for listener in tuple(self._listeners.get(task_id, ())):
            listener()  # its keeper reads it gone and stops

    def _evict(self) -> None:
        now = self._clock()
        for task_id in [t for t, when in self._expiry.items() if when <= now]:
            self._drop(task_id)

    def _evict_finished(self) -> None:
        # Oldest first (insertion order); at most enough to make room for one.
        for task_id in list(self._tasks):
            if len(self._tasks) < self.max_tasks:
                return
            if decode(self._tasks[task_id]).terminal:
                self._drop(task_id)


def _wake(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)
