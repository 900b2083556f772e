"""The relayed listen stream: upstream task notifications onto a downstream listen stream.

A `subscriptions/listen` whose `taskIds` name proxy task ids (gateway/tasks.py) is followed on
each upstream's own listen stream: `relay_task_notes` verifies each id with the relay whose MAC
it carries, opens that upstream's stream for the ids it holds, acknowledges the ids the
upstreams honoured, and passes each `notifications/tasks` on under the id as the client holds
it. One proxy's `TaskRelay` and the mounted proxies' `TaskRelays` (gateway/task_hub.py) both
wrap `subscriptions/listen` with it. This module imports gateway/tasks.py, so a lone proxy's
`TaskRelay` imports it at its first listen stream (the hub, loaded once mounted, at import).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..server.method import Handler
from ..server.request import Request
from ..wire.errors import McpError, invalid_params, missing_capability
from ..wire.meta import SUBSCRIPTION_ID
from .tasks import EXTENSION, declares_tasks

if TYPE_CHECKING:
    from ..core.core import Core
    from .tasks import TaskRelay

MAX_TASK_IDS = 100  # task ids one listen stream may name (as rondo's own tasks extension)


async def relay_task_notes(core: Core, req: Request, call_next: Handler,
                           relays: list[TaskRelay], keep_inner: bool = False) -> dict[str, Any]:
    """A listen stream with a `taskIds` filter: each id a relay verifies for this principal is
    followed on a listen stream of that upstream's own (opened before the acknowledgement,
    which names the ids the upstream honoured), and each `notifications/tasks` is passed on
    under the id as the client holds it. Ids of another principal, of no upstream here, or
    edited are left out of the acknowledgement, as unknown ids are; with `keep_inner` (the
    server runs tasks of its own inside), the ids `call_next` acknowledged stay in it too."""
    wanted = req.params.get("notifications")
    ids = wanted.get("taskIds") if isinstance(wanted, Mapping) else None
    active = [relay for relay in relays if relay.active()]
    if ids is None or not active:
        return await call_next(core, req)
    if not declares_tasks(req.env.capabilities):
        raise missing_capability({"extensions": {EXTENSION: {}}})
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids) \
            or len(ids) > MAX_TASK_IDS:
        raise invalid_params(f"taskIds must be an array of at most {MAX_TASK_IDS} task ids")
    # Per relay: upstream id -> the proxy id as this client holds it.
    held: dict[int, dict[str, str]] = {}
    for task_id in dict.fromkeys(ids):
        for n, relay in enumerate(active):
            try:
                upstream_id = relay.unwrap_id(core, req, task_id)
            except McpError:
                continue
            held.setdefault(n, {}).setdefault(upstream_id, task_id)
            break
    async with contextlib.AsyncExitStack() as stack:
        streams: list[tuple[Any, dict[str, str]]] = []
        for n, mine in held.items():
            stream = await active[n].listen_upstream(stack, req, list(mine))
            if stream is not None:
                streams.append((stream, mine))
        honoured = [mine[i] for stream, mine in streams
                    for i in (stream.acknowledged or {}).get("taskIds") or []
                    if isinstance(i, str) and i in mine]
        acked = asyncio.Event()

        def emit(note: dict[str, Any]) -> None:
            if note.get("method") == "notifications/subscriptions/acknowledged":
                inner_ids = note["params"]["notifications"].get("taskIds") if keep_inner else ()
                note["params"]["notifications"]["taskIds"] = honoured + [
                    i for i in inner_ids or () if i not in honoured]
                req.emit(note)
                acked.set()
                return
            req.emit(note)

        inner = Request(req.id, req.method, req.params, req.env, req.dialect, emit=emit,
                        auth=req.auth, call=req.call)
        for stream, mine in streams:
            follower = asyncio.ensure_future(_pass_on(stream, mine, req, acked))
            stack.callback(follower.cancel)
        return await call_next(core, inner)


async def _pass_on(stream: Any, held: Mapping[str, str], req: Request,
                   acked: asyncio.Event) -> None:
    """The upstream's `notifications/tasks` on `stream`, passed on to `req`'s stream."""
    await acked.wait()  # nothing for the subscription before its acknowledgement
    async for note in stream:
        params = note.get("params")
        if note.get("method") != "notifications/tasks" or not isinstance(params, Mapping):
            continue
        upstream_id = params.get("taskId")
        task_id = held.get(upstream_id) if isinstance(upstream_id, str) else None
        if task_id is None:
            continue  # not one this stream asked for
        meta = params.get("_meta")
        out = {k: v for k, v in params.items() if k not in ("_meta", "requestState")}
        out["taskId"] = task_id
        out["_meta"] = {**(meta if isinstance(meta, Mapping) else {}), SUBSCRIPTION_ID: req.id}
        req.emit({"jsonrpc": "2.0", "method": "notifications/tasks", "params": out})
