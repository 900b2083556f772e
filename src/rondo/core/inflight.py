"""Requests in flight on one connection or session: duplicate ids, cancellation, draining.

One implementation for every place that runs requests as tasks (the pipe connection of stdio
and memory, legacy sessions on any transport). Tasks remove themselves when they finish.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from typing import Any

from ..wire.jsonrpc import valid_id


class InFlight:
    __slots__ = ("_tasks",)

    def __init__(self) -> None:
        self._tasks: dict[Any, asyncio.Task[Any]] = {}

    def __contains__(self, rid: Any) -> bool:
        return valid_id(rid) and rid in self._tasks

    def __len__(self) -> int:
        return len(self._tasks)

    def __bool__(self) -> bool:
        return bool(self._tasks)

    def __iter__(self) -> Iterator[asyncio.Task[Any]]:
        return iter(tuple(self._tasks.values()))

    def get(self, rid: Any) -> asyncio.Task[Any] | None:
        return self._tasks.get(rid) if valid_id(rid) else None

    def start(self, rid: Any, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run `coro` as a task tracked under `rid` (untracked when the id is unusable)."""
        task = asyncio.ensure_future(coro)
        self.track(rid, task)
        return task

    def track(self, rid: Any, task: asyncio.Task[Any]) -> None:
        if not valid_id(rid):
            return
        self._tasks[rid] = task
        tasks = self._tasks

        def done(_: Any) -> None:
            if tasks.get(rid) is task:
                del tasks[rid]

        task.add_done_callback(done)

    def cancel_from(self, params: Any) -> bool:
        """Act on a `notifications/cancelled`: cancel the request it names, if it is running."""
        rid = params.get("requestId") if isinstance(params, dict) else None
        task = self.get(rid)
        if task is None:
            return False
        task.cancel()
        return True

    def cancel_all(self) -> None:
        for task in tuple(self._tasks.values()):
            task.cancel()

    async def wait(self) -> None:
        pending = [t for t in self._tasks.values() if not t.done()]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
