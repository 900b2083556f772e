"""Run a request's ASGI coroutine at once, and give it a task only if it has to wait.

uvicorn makes an asyncio task for every request: the task object, its entry in asyncio's
weak set of all tasks (Python code in 3.11), a loop turn before it starts, another for its done
callbacks, and the weak set's removal when it is collected. A request whose body has arrived
whole usually never waits at all (reading the body, a synchronous tool, writing the answer), so
under `serve()`'s httptools protocol it runs in the parser callback that completed it, inside a
context of its own, exactly as its task would have. The first time it does wait, it is handed
to a task from that point on, with the same context, and is counted in uvicorn's task set like
any other (for `limit_concurrency` and graceful shutdown). A request that needs a task before
it waits (`asyncio.timeout`, a relay's deadline) yields once (`asyncio.sleep(0)`): the task's
first step is that turn, so it resumes at once.
"""

from __future__ import annotations

import contextvars
from collections.abc import Coroutine, Generator
from typing import Any


def start(
    coro: Coroutine[Any, Any, None],
    loop: Any,
    tasks: set[Any],
    context: contextvars.Context,
) -> None:
    """Run `coro` in `context` up to its first wait; from there on it runs as a task."""
    try:
        waiting_on = context.run(coro.send, None)
    except StopIteration:
        return  # answered without waiting: no task at all
    task = loop.create_task(Resumed(coro, waiting_on), context=context)
    task.add_done_callback(tasks.discard)
    tasks.add(task)


_STARTED: Any = object()


class Resumed(Coroutine[Any, Any, None]):
    """`coro`, already running and waiting on `waiting_on`, as a coroutine a task can drive.

    The task's first step gets what `coro` waits on; every later send, and every throw (a
    cancellation even before that first step), goes to `coro` itself."""

    __slots__ = ("_coro", "_waiting_on")

    def __init__(self, coro: Coroutine[Any, Any, None], waiting_on: Any) -> None:
        self._coro = coro
        self._waiting_on = waiting_on

    def send(self, value: Any) -> Any:
        waiting_on = self._waiting_on
        if waiting_on is _STARTED:
            return self._coro.send(value)
        self._waiting_on = _STARTED
        if waiting_on is None:  # a bare yield (`asyncio.sleep(0)`): this step is its turn
            return self._coro.send(value)
        return waiting_on

    def throw(self, *exc: Any) -> Any:
        self._waiting_on = _STARTED
        return self._coro.throw(*exc)

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Generator[Any, Any, None]:
        raise TypeError("Resumed is driven by its task, not awaited")
