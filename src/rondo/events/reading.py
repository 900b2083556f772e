"""Reading the log for a client: `events/poll` (a page after a cursor) and `events/stream`
(occurrences as notifications while the request stays open, heartbeats in quiet spells)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..wire.errors import McpError, invalid_params
from ..wire.meta import SUBSCRIPTION_ID
from .log import BadCursor
from .types import EventType, epoch

if TYPE_CHECKING:
    from ..core.core import Core
    from ..server.request import Request
    from .extension import Events


async def start_at(events: Events, name: str, cursor: Any) -> str:
    if cursor is None:
        return await events.log.head(name)
    if not isinstance(cursor, str):
        raise invalid_params("cursor must be a string or null")
    return cursor


async def read(events: Events, declared: EventType, arguments: dict[str, Any], after: str,
               limit: int, oldest: float | None) -> tuple[list[dict[str, Any]], str, bool, bool]:
    """Matching occurrences after `after`: (events, new cursor, truncated, has more)."""
    found: list[dict[str, Any]] = []
    truncated = False
    position = after
    for _ in range(10):  # scan at most ten batches per call
        try:
            entries, gap = await events.log.read(declared.name, position, limit)
        except BadCursor:
            raise invalid_params("Invalid cursor") from None
        truncated = truncated or gap
        for cursor, occurrence in entries:
            position = cursor
            if oldest is not None and epoch(occurrence["timestamp"]) < oldest:
                truncated = True
                continue
            if declared.match(arguments, occurrence["data"]):
                found.append({**occurrence, "cursor": cursor})
                if len(found) >= limit:
                    return found, position, truncated, True
        if len(entries) < limit:
            return found, position, truncated, False
    return found, position, truncated, True


async def poll(events: Events, core: Core, req: Request) -> dict[str, Any]:
    declared, arguments = events.subject(req, "poll")
    params = req.params
    limit = params.get("maxEvents", events.max_events)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise invalid_params("maxEvents must be a positive integer")
    limit = min(limit, events.max_events)
    if params.get("cursor") is None:  # start from now: no events, a fresh cursor
        return {"events": [], "cursor": await events.log.head(declared.name), "truncated": False,
                "hasMore": False, "nextPollMs": events.poll_interval_ms}
    after = await start_at(events, declared.name, params.get("cursor"))
    found, cursor, truncated, more = await read(events, declared, arguments, after, limit,
                                                      oldest_of(params))
    return {"events": [{k: v for k, v in e.items() if k != "cursor"} for e in found],
            "cursor": cursor, "truncated": truncated, "hasMore": more,
            "nextPollMs": events.poll_interval_ms}


def oldest_of(params: Mapping[str, Any]) -> float | None:
    age = params.get("maxAgeMs")
    if age is None:
        return None
    if not isinstance(age, int) or isinstance(age, bool) or age < 0:
        raise invalid_params("maxAgeMs must be a non-negative integer")
    return time.time() - age / 1000


async def stream(events: Events, core: Core, req: Request) -> dict[str, Any]:
    declared, arguments = events.subject(req, "push")
    position = await start_at(events, declared.name, req.params.get("cursor"))
    oldest = oldest_of(req.params)
    meta = {SUBSCRIPTION_ID: req.id}
    try:
        first, position, truncated, _ = await read(events, declared, arguments, position,
                                                         events.max_events, oldest)
    except McpError:
        raise
    req.emit({"jsonrpc": "2.0", "method": "notifications/events/active",
              "params": {"cursor": position, "truncated": truncated, "_meta": meta}})
    pending = first
    quiet_since = time.monotonic()
    while True:
        for occurrence in pending:
            req.emit({"jsonrpc": "2.0", "method": "notifications/events/event",
                      "params": {**occurrence, "_meta": meta}})
            quiet_since = time.monotonic()
        remaining = events.heartbeat - (time.monotonic() - quiet_since)
        if remaining <= 0:
            req.emit({"jsonrpc": "2.0", "method": "notifications/events/heartbeat",
                      "params": {"cursor": position, "_meta": meta}})
            quiet_since = time.monotonic()
            remaining = events.heartbeat
        await events.log.wait(declared.name, position, remaining)
        pending, position, truncated, _ = await read(events, declared, arguments, position,
                                                           events.max_events, None)
        if truncated:  # the stream fell behind the retained backlog
            req.emit({"jsonrpc": "2.0", "method": "notifications/events/active",
                      "params": {"cursor": position, "truncated": True, "_meta": meta}})
