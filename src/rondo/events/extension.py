"""`Events`: the events extension (`io.modelcontextprotocol/events`, SEP-3415 draft), as far as
its design sketch can be read. Experimental: the wire may change when the SEP settles.

Event types are declared with schemas; `await server.emit(name, data)` appends an occurrence to
the log, from a tool or from anywhere in the app. Clients read it by `events/poll`, by a
long-lived `events/stream` (occurrences as `notifications/events/event`, heartbeats in quiet
spells), or by webhook (`events/subscribe`: signed POSTs with bounded retries).

This module is the extension object: its configuration, declaring and emitting, the seam's
hooks and the method rows. The rows' work is in `reading.py` (poll, stream) and
`subscribing.py` (webhook subscriptions); delivering webhooks in `deliverer.py`; the types and
their checks in `types.py`.
"""

from __future__ import annotations

import functools
import json
import secrets
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..server.method import Method
from ..server.request import Request
from ..wire.errors import McpError
from . import reading, subscribing
from .deliverer import Deliverer
from .log import EventLog, MemoryEventLog
from .subscriptions import MemorySubscriptions, SubscriptionStore
from .types import (
    EXTENSION,
    MODES,
    SEP_CODES,
    SKETCH_CODES,
    EventType,
    Match,
    check_arguments,
    default_match,
    iso,
)
from .webhook import Delivery

if TYPE_CHECKING:
    from ..core.core import Core
    from ..server.server import Server

# How a mounted child's event types are named in the parent: `<namespace>_<name>`, as
# `rondo.gateway.mount` names tools (a namespace has no `_`, so the name splits one way).
SEPARATOR = "_"

__all__ = ["EXTENSION", "MODES", "SEP_CODES", "SKETCH_CODES", "EventType", "Events", "Match",
           "default_match"]


class Events:
    """The events extension for one server: `events = server.extension(Events())`, then
    `events.event("incident.created", description=..., payload_schema=...)`.

    - `log`: an `EventLog` (default `MemoryEventLog(backlog=1000)`; `rondo run --redis` makes
      it a `RedisEventLog`, one stream per event type, trimmed to the backlog).
    - `subscriptions`: where webhook subscriptions live (memory, or Redis with the log).
    - `delivery`: a `webhook.Delivery` (attempts, backoff, timeout, `allow_private`,
      `allow_http`: both off by default, SSRF rules apply).
    - `codes`: the error codes (`SKETCH_CODES` default, `SEP_CODES`).
    - `poll_interval_ms`, `heartbeat` (seconds of quiet before a stream heartbeat),
      `max_events` (per poll), `default_ttl_ms` and `max_ttl_ms` (webhook subscriptions).
    - `principal(ctx)`: who subscribes (webhooks need one); default the verified token's.
    - `reclaim_after`: seconds a webhook delivery another worker took may stay unacknowledged
      before this one takes it over (that worker died); longer than a delivery's retries.
    """

    name = EXTENSION

    def __init__(
        self,
        *,
        log: EventLog | None = None,
        subscriptions: SubscriptionStore | None = None,
        delivery: Delivery | None = None,
        codes: Mapping[str, int] = SKETCH_CODES,
        poll_interval_ms: int = 5000,
        heartbeat: float = 15.0,
        max_events: int = 100,
        default_ttl_ms: int = 3_600_000,
        max_ttl_ms: int = 86_400_000,
        principal: Callable[[Any], str | None] | None = None,
        reclaim_after: float = 300.0,
    ) -> None:
        if set(codes) != set(SKETCH_CODES):
            raise ValueError(f"codes must name exactly {sorted(SKETCH_CODES)}")
        if not heartbeat > 0 or not 1 <= max_events <= 1000:
            raise ValueError("heartbeat must be positive and max_events 1-1000")
        if not 1000 <= default_ttl_ms <= max_ttl_ms:
            raise ValueError("default_ttl_ms must be at least 1000 and at most max_ttl_ms")
        self.log: EventLog = log or MemoryEventLog()
        self.subscriptions: SubscriptionStore = subscriptions or MemorySubscriptions()
        self.delivery = delivery or Delivery()
        self.codes = dict(codes)
        self.poll_interval_ms = poll_interval_ms
        self.heartbeat = heartbeat
        self.max_events = max_events
        self.default_ttl_ms = default_ttl_ms
        self.max_ttl_ms = max_ttl_ms
        self._principal = principal
        self.reclaim_after = reclaim_after  # seconds before a dead worker's delivery is retaken
        self.types: dict[str, EventType] = {}
        self.server: Server | None = None
        self.consumer = secrets.token_hex(6)
        self.deliverer = Deliverer(self)
        self.members: dict[str, Events] = {}  # mounted children's, by namespace (`join`)

    # -- declaring and emitting ------------------------------------------------------------------

    def event(self, name: str, *, description: str, payload_schema: Mapping[str, Any] | None = None,
              input_schema: Mapping[str, Any] | None = None, delivery: Iterable[str] = MODES,
              match: Match | None = None) -> EventType:
        """Declare an event type. `match(arguments, data)` says whether an occurrence belongs to
        a subscription's arguments (default: every argument naming a payload field equals it)."""
        if not isinstance(name, str) or not name or len(name) > 128:
            raise ValueError("an event type needs a name of 1-128 characters")
        if name in self.types:
            raise ValueError(f"event type {name!r} is declared twice")
        modes = tuple(dict.fromkeys(delivery))
        if not modes or any(m not in MODES for m in modes):
            raise ValueError(f"delivery must be a non-empty subset of {MODES}")
        declared = EventType(name, description, modes, dict(input_schema or {"type": "object"}),
                             dict(payload_schema or {"type": "object"}), match or default_match)
        self.types[name] = declared
        return declared

    def server_calls(self) -> dict[str, Callable[..., Any]]:
        """What `server.emit(...)` calls (`Server.extension` files it under `server_calls`)."""
        return {"emit": self.emit}

    async def emit(self, name: str, data: Mapping[str, Any], *, event_id: str | None = None,
                   timestamp: float | None = None) -> dict[str, Any]:
        """Record one occurrence; every poller, stream and webhook of this type (on any worker,
        with a shared log) sees it. Returns the occurrence with its cursor."""
        if name not in self.types:
            routed = self._member_of(name)
            if routed is not None:  # a mounted child's type, by its name in this server
                member, namespace, own = routed
                done = await member.emit(own, data, event_id=event_id, timestamp=timestamp)
                return {**done, "name": name}
            raise ValueError(f"event type {name!r} is not declared")
        if not isinstance(data, Mapping):
            raise TypeError("event data must be an object")
        occurrence = {"eventId": event_id or f"evt_{secrets.token_hex(12)}", "name": name,
                      "timestamp": iso(time.time() if timestamp is None else timestamp),
                      "data": dict(data)}
        if len(json.dumps(occurrence)) > 256 * 1024:
            raise ValueError("an event occurrence is limited to 256 KiB of JSON")
        cursor = await self.log.append(name, occurrence)
        if not self.log.shared and "webhook" in self.types[name].delivery:
            self.deliverer.enqueue(name, cursor, occurrence)
        return {**occurrence, "cursor": cursor}

    # -- the Extension protocol ----------------------------------------------------------------

    def capability(self, server: Server) -> Mapping[str, Any] | None:
        return {}

    def methods(self) -> Iterable[Method]:
        return [
            Method("events/list", self._list),
            Method("events/poll", functools.partial(self._serve, reading.poll)),
            Method("events/stream", functools.partial(self._serve, reading.stream),
                   suspends=lambda core, params: True),
            Method("events/subscribe", functools.partial(self._serve, subscribing.subscribe),
                   suspends=lambda core, params: True),
            Method("events/unsubscribe", functools.partial(self._serve, subscribing.unsubscribe)),
        ]

    # -- mounted (rondo.gateway.mount): a child's event types under its namespace ---------------

    def hub(self) -> Events:
        """The instance a parent without events serves its mounted children's with: no types of
        its own, this one's codes and reading settings."""
        return Events(codes=self.codes, poll_interval_ms=self.poll_interval_ms,
                      heartbeat=self.heartbeat, max_events=self.max_events,
                      default_ttl_ms=self.default_ttl_ms, max_ttl_ms=self.max_ttl_ms)

    def join(self, namespace: str, member: Any) -> None:
        """Serve `member`'s event types (a mounted child's) as `<namespace>_<name>`; requests
        naming one go to the child's own log and subscriptions. A name this server already
        serves is refused (ValueError) and nothing changes."""
        if not isinstance(member, Events):
            raise ValueError(f"a mounted server's {EXTENSION!r} extension is not Events")
        taken = set(self.types) | {f"{ns}{SEPARATOR}{t}" for ns, m in self.members.items()
                                   if ns != namespace for t in m.types}
        for own in member.types:
            full = f"{namespace}{SEPARATOR}{own}"
            if full in taken or len(full) > 128:
                raise ValueError(f"event type {full!r} (type {own!r} of the server mounted as "
                                 f"{namespace!r}) is already served by this server"
                                 if full in taken else
                                 f"event type {full!r} is longer than 128 characters")
        self.members[namespace] = member

    def leave(self, namespace: str) -> None:
        self.members.pop(namespace, None)

    def _member_of(self, name: Any) -> tuple[Events, str, str] | None:
        if not isinstance(name, str) or name in self.types or SEPARATOR not in name:
            return None
        namespace, own = name.split(SEPARATOR, 1)
        member = self.members.get(namespace)
        return None if member is None else (member, namespace, own)

    async def _serve(self, row: Any, core: Core, req: Request) -> dict[str, Any]:
        """A row naming an event type: this server's own, or a mounted child's (the request goes
        to the child under its own name; what comes back carries the name served here)."""
        routed = self._member_of(req.params.get("name"))
        if routed is None:
            result: dict[str, Any] = await row(self, core, req)
            return result
        member, namespace, own = routed
        prefix = f"{namespace}{SEPARATOR}"

        def emit(message: dict[str, Any]) -> None:
            params = message.get("params")
            if message.get("method") == "notifications/events/event" and isinstance(params, dict):
                message = {**message, "params": {**params, "name": prefix + str(params["name"])}}
            req.emit(message)

        inner = Request(req.id, req.method, {**req.params, "name": own}, req.env, req.dialect,
                        emit=emit, auth=req.auth, call=req.call, headers=req.headers,
                        peer=req.peer)
        result = await member._serve(row, core, inner)
        found = result.get("events")
        if isinstance(found, list):
            result = {**result, "events": [{**e, "name": prefix + str(e.get("name"))}
                                           for e in found]}
        return result

    def attach(self, server: Server) -> None:
        self.server = server
        server.lifespan(self._lifespan)

    async def _lifespan(self, server: Any) -> AsyncIterator[dict[str, Any]]:
        self.deliverer.start()
        try:
            yield {}
        finally:
            await self.stop()

    def fleet_problem(self, server: Server) -> str | None:
        if self.log.shared and self.subscriptions.shared:
            for member in list(self.members.values()):
                problem = member.fleet_problem(server)
                if problem is not None:
                    return problem
            return None
        return ("its event log or webhook subscriptions live in one process, so an event "
                "emitted on one worker would not reach the others. Use rondo run --redis URL "
                "(RedisEventLog), or run one worker.")

    def use_redis(self, url: str) -> None:
        from .log import RedisEventLog
        from .subscriptions import RedisSubscriptions

        if isinstance(self.log, MemoryEventLog):
            self.log = RedisEventLog(url, backlog=self.log.backlog,
                                     prefix=f"rondo:events:{self.server.name if self.server else ''}:")
        if isinstance(self.subscriptions, MemorySubscriptions):
            self.subscriptions = RedisSubscriptions(
                url, prefix=f"rondo:event-subs:{self.server.name if self.server else ''}:")
        for member in list(self.members.values()):
            member.use_redis(url)

    # -- for the rows (reading.py, subscribing.py) ----------------------------------------------

    def error(self, kind: str, message: str, data: Any = None) -> McpError:
        return McpError(self.codes[kind], message, data)

    def subject(self, req: Request, mode: str) -> tuple[EventType, dict[str, Any]]:
        """The declared type a request names, delivered by `mode`, and its checked arguments."""
        name = req.params.get("name")
        declared = self.types.get(name) if isinstance(name, str) else None
        if declared is None:
            raise self.error("not_found", f"Unknown event: {str(name)[:128]}", {"kind": "event"})
        if mode not in declared.delivery:
            raise self.error("unsupported", f"{declared.name} is not delivered by {mode}",
                              {"feature": "deliveryMode", "value": mode})
        return declared, check_arguments(declared.input_schema, req.params.get("arguments"))

    def principal_of(self, core: Core, req: Request) -> str | None:
        ctx = core.modern.context(core, req)
        if self._principal is not None:
            return self._principal(ctx)
        binding = getattr(req.auth, "binding", None)
        return binding if isinstance(binding, str) else None

    async def _list(self, core: Core, req: Request) -> dict[str, Any]:
        listed = [t.wire() for t in self.types.values()]
        for namespace, member in list(self.members.items()):
            mounted = (await member._list(core, req))["events"]
            listed += [{**e, "name": f"{namespace}{SEPARATOR}{e['name']}"} for e in mounted]
        return {"events": listed}

    # -- webhook delivery ------------------------------------------------------------------------

    @property
    def delivered(self) -> int:
        """Webhook POSTs accepted by this process (for tests and metrics)."""
        return self.deliverer.delivered

    async def stop(self) -> None:
        await self.deliverer.stop()
