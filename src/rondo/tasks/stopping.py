"""What the tasks extension starts in the background, and its end when the server stops.

Some store writes must not be cut short by the cancellation that asked for them: withdrawing a
question nobody waits for any more, writing a task's end, and a progress message (which comes
from a worker thread). Each runs as an asyncio task of its own, kept in the event loop's
`Writes` until it ends, so none is left behind unseen: its failure is logged (the exception's
type, never its text, which may hold a store URL), and the server's stop awaits it. The task's
runner waits for its own writes (`written`) even when it is cancelled again meanwhile (as
`asyncio.run` does to every task when it ends), for a bounded time.

`stop(tasks)` runs at the end of the server's lifespan, on its loop: the tasks that loop runs
end (failed: no other worker can resume running code), then their keepers, the lease timer and
every write are awaited, all within `Tasks(stop_timeout=...)` seconds; what is left then is
cancelled and awaited (at most `GRACE` seconds more), so nothing of the extension is pending
when the loop closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .extension import Tasks

log = logging.getLogger("rondo.tasks")

MAX_WRITES = 10_000  # per event loop; past it a progress message is dropped (the next one counts)
GRACE = 1.0  # seconds for what was cancelled at the stop's deadline to finish cancelling


def short(task_id: str) -> str:
    """A task id for a log line: enough to tell tasks apart, too little to use (an id is a
    bearer capability for an anonymous client's task)."""
    return task_id[:6] + "…"


class Writes:
    """The background store writes of one event loop. Bounded: a withdrawal and a task's last
    write are each awaited by the task's runner (so there are at most two per running task),
    and progress messages past `MAX_WRITES` in flight are dropped."""

    def __init__(self) -> None:
        self.running: set[asyncio.Task[Any]] = set()
        self.deadline: float | None = None  # while the server stops: when its stop gives up

    @property
    def full(self) -> bool:
        return len(self.running) >= MAX_WRITES

    def start(self, coro: Coroutine[Any, Any, Any], failure: str, task_id: str) -> asyncio.Task[Any]:
        """Run `coro` as a task kept here until it ends; if it fails, log `failure` (a message
        taking the task's short id and the exception's type)."""
        task = asyncio.get_running_loop().create_task(coro)
        self.running.add(task)

        def ended(done: asyncio.Task[Any]) -> None:
            self.running.discard(done)
            if done.cancelled():
                return
            exc = done.exception()  # retrieved here, whether or not anybody awaits it
            if exc is not None:
                log.warning(failure, short(task_id), type(exc).__name__)

        task.add_done_callback(ended)
        return task


async def written(tasks: Tasks, write: asyncio.Task[Any]) -> None:
    """Await `write` (from `Tasks.write`) for a runner cleaning up after a cancellation: through
    further cancellations, for at most `stop_timeout` seconds and not past the server's stop;
    then raise the cancellation that came meanwhile, if one did. The write's own failure is
    not raised (its task logs it)."""
    loop = asyncio.get_running_loop()
    writes = tasks.writes(loop)
    deadline = loop.time() + tasks.stop_timeout
    interrupted = False
    while not write.done():
        if writes.deadline is not None:
            deadline = min(deadline, writes.deadline)
        left = deadline - loop.time()
        if left <= 0:
            break  # left to the server's stop (which cancels it) or to the store's own timeouts
        try:
            await asyncio.wait({write}, timeout=left)
        except asyncio.CancelledError:
            interrupted = True
    if interrupted:
        raise asyncio.CancelledError


async def stop(tasks: Tasks) -> None:
    """End what `tasks` runs on the running loop and await it, within `tasks.stop_timeout`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + tasks.stop_timeout
    writes = tasks.writes(loop)
    writes.deadline = deadline
    try:
        await _stop(tasks, loop, deadline, writes)
    finally:
        writes.deadline = None  # the server may start again on this loop


async def _stop(tasks: Tasks, loop: asyncio.AbstractEventLoop, deadline: float, writes: Writes) -> None:
    launches = [launch for launch in list(tasks.running) if launch.loop is loop]
    keepers = [launch.keeper.task for launch in launches if launch.keeper is not None]
    for launch in launches:
        launch.halt()
    late = await _drain([launch.runner for launch in launches], deadline)
    late += await _drain(keepers, deadline)
    leases = tasks._leases.pop(loop, None)
    if leases is not None:
        late += await _drain([leases.stop()], deadline)
    late += await _drain(list(writes.running), deadline)
    if late:
        log.warning("rondo.tasks: %d tasks or store writes were still running %.1f s into the "
                    "server's stop; cancelled", late, tasks.stop_timeout)
    made = tasks._made_store  # made by `use_redis` (`rondo run --redis`): nobody else closes it
    close = getattr(made, "aclose", None) if made is not None and made is tasks.store else None
    if close is not None:
        with contextlib.suppress(Exception):
            await close()


async def _drain(running: Iterable[asyncio.Task[Any] | None], deadline: float) -> int:
    """Await `running` until `deadline`; cancel what is left (and let it finish cancelling).
    How many had to be cancelled."""
    pending = {task for task in running if task is not None and not task.done()}
    if not pending:
        return 0
    loop = asyncio.get_running_loop()
    _, pending = await asyncio.wait(pending, timeout=max(0.0, deadline - loop.time()))
    if not pending:
        return 0
    for task in pending:
        task.cancel()
    await asyncio.wait(pending, timeout=GRACE)
    return len(pending)
