"""`subscriptions/listen` with a `taskIds` filter: the caller's own tasks, streamed as
`notifications/tasks` (a full `DetailedTask` at subscription and on every change, until each
is terminal), read from the store, so changes made on any replica reach the stream. The
stream's watcher ends with its request: cancelled, then awaited, its failure logged."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..server.request import Request
from ..wire.errors import invalid_params
from ..wire.meta import SUBSCRIPTION_ID
from .extension import _needs_tasks, declares_tasks
from .record import detailed_wire, principal_digest

if TYPE_CHECKING:
    from ..core.core import Core
    from ..server.method import Handler
    from .extension import Tasks

log = logging.getLogger("rondo.tasks")


async def listen(tasks: Tasks, core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
    wanted = req.params.get("notifications")
    ids = wanted.get("taskIds") if isinstance(wanted, Mapping) else None
    if ids is None:
        return await call_next(core, req)
    if not declares_tasks(req.env.capabilities):
        raise _needs_tasks()
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids) or len(ids) > 100:
        raise invalid_params("taskIds must be an array of at most 100 task ids")
    mine = principal_digest(tasks.principal_of(core, req))
    owned: list[str] = []
    tracer = core.tracer
    origins: list[tuple[str, Any]] | None = [] if tracer is not None and tracer.on else None
    for task_id in dict.fromkeys(ids):
        record = await tasks.store.get(task_id)
        if record is not None and record.principal == mine:
            owned.append(task_id)
            if origins is not None:
                origins.append((task_id, record.trace))
    if origins and tracer is not None:
        tracer.task_watch(origins)

    def emit(note: dict[str, Any]) -> None:
        if note.get("method") == "notifications/subscriptions/acknowledged":
            note["params"]["notifications"]["taskIds"] = list(owned)
        req.emit(note)

    inner = Request(req.id, req.method, req.params, req.env, req.dialect, emit=emit,
                    auth=req.auth, call=req.call)
    watcher = asyncio.ensure_future(watch(tasks, owned, req.id, req.emit))
    watcher.add_done_callback(_stopped)
    try:
        return await call_next(core, inner)
    finally:
        watcher.cancel()
        await asyncio.wait({watcher})  # a cancelled read ends at once: not left to the loop's close


async def watch(tasks: Tasks, task_ids: list[str], sub_id: Any,
                emit: Callable[[dict[str, Any]], None]) -> None:
    """Push a full `DetailedTask` whenever a watched task changes, until each is terminal."""
    seen: dict[str, tuple[str, float, str | None]] = {}
    live = list(task_ids)
    while live:
        for task_id in list(live):
            record = await tasks.store.get(task_id)
            if record is None:
                live.remove(task_id)
                continue
            mark = (record.status, record.updated, record.message)
            if seen.get(task_id) != mark:  # the state at subscription, then every change
                params = {"_meta": {SUBSCRIPTION_ID: sub_id}, **detailed_wire(record)}
                emit({"jsonrpc": "2.0", "method": "notifications/tasks", "params": params})
                seen[task_id] = mark
            if record.terminal:
                live.remove(task_id)
        if live:
            await tasks.store.wait(live, tasks.watch_interval)


def _stopped(watcher: asyncio.Future[None]) -> None:
    if not watcher.cancelled() and (exc := watcher.exception()) is not None:
        log.warning("rondo.tasks: a notifications/tasks stream stopped following its tasks (%s)",
                    type(exc).__name__)
