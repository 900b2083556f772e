"""Where tasks live: the `TaskStore` interface and the bounded in-memory store.

Every operation is a coroutine so a networked store (Redis, `redis_store.py`) fits the same
shape. `modify` is the one write after `create`: an atomic read-change-write, so a
`tasks/update` on one replica and the worker's own writes on another never lose each other's
changes. A store hands out copies: changing a record changes nothing until it is written.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Protocol, runtime_checkable

from ..wire.errors import internal_error
from .record import TaskRecord, decode, encode

Change = Callable[[TaskRecord], bool]


@runtime_checkable
class TaskStore(Protocol):
    """`create` returns once a `get` anywhere would find the task (durable, consistent).
    `get` is None for an unknown or expired task. `modify(id, change)` runs `change` on a copy
    and writes it back atomically when `change` returns True; it returns the record as it now
    stands (None if gone). `wait(ids, timeout)` returns when one of those tasks may have
    changed, or after `timeout` seconds."""

    async def create(self, record: TaskRecord) -> None: ...

    async def get(self, task_id: str) -> TaskRecord | None: ...

    async def modify(self, task_id: str, change: Change) -> TaskRecord | None: ...

    async def wait(self, task_ids: Iterable[str], timeout: float) -> None: ...


class MemoryTaskStore:
    """Tasks of one process. Bounded: at most `max_tasks` are kept; expired tasks go first,
    then the oldest finished ones; when every slot holds a live task, creating one more is
    refused (-32603) rather than dropping work somebody is waiting for."""

    def __init__(self, max_tasks: int = 10_000, *, clock: Callable[[], float] = time.time) -> None:
        if not isinstance(max_tasks, int) or max_tasks < 1:
            raise ValueError("max_tasks must be a positive integer")
        self.max_tasks = max_tasks
        self._clock = clock
        self._tasks: OrderedDict[str, bytes] = OrderedDict()
        self._expiry: dict[str, float] = {}
        self._waiters: set[asyncio.Future[None]] = set()

    def __len__(self) -> int:
        return len(self._tasks)

    async def create(self, record: TaskRecord) -> None:
        self._evict()
        if len(self._tasks) >= self.max_tasks:
            self._evict_finished()
        if len(self._tasks) >= self.max_tasks:
            raise internal_error("Too many tasks are running; try again later")
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
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.add(fut)
        try:
            await asyncio.wait_for(asyncio.shield(fut), timeout)
        except TimeoutError:
            pass
        finally:
            self._waiters.discard(fut)

    # -- internals ---------------------------------------------------------------------------

    def _put(self, record: TaskRecord) -> None:
        self._tasks[record.id] = encode(record)
        expires = record.expires_at()
        if expires is None:
            self._expiry.pop(record.id, None)
        else:
            self._expiry[record.id] = expires
        waiters, self._waiters = self._waiters, set()
        for fut in waiters:
            if not fut.done():
                fut.get_loop().call_soon_threadsafe(_wake, fut)

    def _live(self, task_id: str) -> bytes | None:
        raw = self._tasks.get(task_id)
        if raw is None:
            return None
        expires = self._expiry.get(task_id)
        if expires is not None and expires <= self._clock():
            self._drop(task_id)
            return None
        return raw

    def _drop(self, task_id: str) -> None:
        self._tasks.pop(task_id, None)
        self._expiry.pop(task_id, None)

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
