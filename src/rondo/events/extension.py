"""`Events`: the events extension (`io.modelcontextprotocol/events`, SEP-3415 draft), as far as
its design sketch can be read. Experimental: the wire may change when the SEP settles.

Event types are declared with schemas; `await server.emit(name, data)` appends an occurrence to
the log, from a tool or from anywhere in the app. Clients read it by `events/poll`, by a
long-lived `events/stream` (occurrences as `notifications/events/event`, heartbeats in quiet
spells), or by webhook (`events/subscribe`: signed POSTs with bounded retries).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hmac
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..server.method import Method
from ..wire.errors import McpError, invalid_params
from ..wire.meta import SUBSCRIPTION_ID
from .log import BadCursor, EventLog, MemoryEventLog
from .subscriptions import MemorySubscriptions, SubscriptionStore, canonical, subscription_id
from .webhook import Delivery, WebhookError, check_url, parse_secret, pick_address

if TYPE_CHECKING:
    from ..core.core import Core
    from ..server.request import Request
    from ..server.server import Server

log = logging.getLogger("rondo.events")

EXTENSION = "io.modelcontextprotocol/events"
MODES = ("poll", "push", "webhook")
# The design sketch's codes (also what OpenAI's guide uses); SEP-3415's provisional numbers are
# SEP_CODES. Neither is settled: pass `codes=` to choose.
SKETCH_CODES = {"not_found": -32011, "forbidden": -32012, "exhausted": -32013,
                "unsupported": -32014, "callback": -32015}
SEP_CODES = {"not_found": -32023, "forbidden": -32024, "exhausted": -32025,
             "unsupported": -32026, "callback": -32027}
Match = Callable[[Mapping[str, Any], Mapping[str, Any]], bool]


def default_match(arguments: Mapping[str, Any], data: Mapping[str, Any]) -> bool:
    """An occurrence matches when every argument that names a payload field equals it."""
    return all(data[k] == v for k, v in arguments.items() if k in data)


def _iso(seconds: float) -> str:
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _epoch(iso: str) -> float:
    return datetime.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


class EventType:
    __slots__ = ("name", "description", "delivery", "input_schema", "payload_schema", "match")

    def __init__(self, name: str, description: str, delivery: tuple[str, ...],
                 input_schema: dict[str, Any], payload_schema: dict[str, Any], match: Match) -> None:
        self.name = name
        self.description = description
        self.delivery = delivery
        self.input_schema = input_schema
        self.payload_schema = payload_schema
        self.match = match

    def wire(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "delivery": list(self.delivery),
                "inputSchema": self.input_schema, "payloadSchema": self.payload_schema}


def _check_arguments(schema: Mapping[str, Any], arguments: Any) -> dict[str, Any]:
    """A shallow check of subscription arguments: an object, required keys present, declared
    primitive types kept, no unknown keys when `additionalProperties` is false."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise invalid_params("arguments must be an object")
    props = schema.get("properties") or {}
    for key in schema.get("required") or ():
        if key not in arguments:
            raise invalid_params(f"arguments: {key!r} is required")
    types: dict[str, type | tuple[type, ...]] = {
        "string": str, "boolean": bool, "integer": int, "number": (int, float), "object": dict,
        "array": list}
    for key, value in arguments.items():
        spec = props.get(key)
        if spec is None:
            if schema.get("additionalProperties") is False:
                raise invalid_params(f"arguments: {key!r} is not allowed")
            continue
        kind = spec.get("type") if isinstance(spec, dict) else None
        expected = types.get(kind) if isinstance(kind, str) else None
        if expected is not None and (not isinstance(value, expected) or
                                     (isinstance(value, bool) and kind != "boolean")):
            raise invalid_params(f"arguments: {key!r} must be {kind}")
    return arguments


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
        self._queue: asyncio.Queue[tuple[str, str, dict[str, Any]]] | None = None
        self._deliverer: asyncio.Task[None] | None = None
        self.delivered = 0  # webhook POSTs accepted by this process (for tests and metrics)

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
            raise ValueError(f"event type {name!r} is not declared")
        if not isinstance(data, Mapping):
            raise TypeError("event data must be an object")
        occurrence = {"eventId": event_id or f"evt_{secrets.token_hex(12)}", "name": name,
                      "timestamp": _iso(time.time() if timestamp is None else timestamp),
                      "data": dict(data)}
        if len(json.dumps(occurrence)) > 256 * 1024:
            raise ValueError("an event occurrence is limited to 256 KiB of JSON")
        cursor = await self.log.append(name, occurrence)
        if not self.log.shared and "webhook" in self.types[name].delivery:
            self._start()
            assert self._queue is not None
            self._queue.put_nowait((name, cursor, occurrence))
        return {**occurrence, "cursor": cursor}

    # -- the Extension protocol ----------------------------------------------------------------

    def capability(self, server: Server) -> Mapping[str, Any] | None:
        return {}

    def methods(self) -> Iterable[Method]:
        return [
            Method("events/list", self._list),
            Method("events/poll", self._poll),
            Method("events/stream", self._stream, suspends=lambda core, params: True),
            Method("events/subscribe", self._subscribe, suspends=lambda core, params: True),
            Method("events/unsubscribe", self._unsubscribe),
        ]

    def attach(self, server: Server) -> None:
        self.server = server
        server.lifespan(self._lifespan)

    async def _lifespan(self, server: Any) -> AsyncIterator[dict[str, Any]]:
        self._start()
        try:
            yield {}
        finally:
            await self.stop()

    def fleet_problem(self, server: Server) -> str | None:
        if self.log.shared and self.subscriptions.shared:
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

    # -- helpers ---------------------------------------------------------------------------------

    def _error(self, kind: str, message: str, data: Any = None) -> McpError:
        return McpError(self.codes[kind], message, data)

    def _subject(self, req: Request, mode: str) -> tuple[EventType, dict[str, Any]]:
        name = req.params.get("name")
        declared = self.types.get(name) if isinstance(name, str) else None
        if declared is None:
            raise self._error("not_found", f"Unknown event: {str(name)[:128]}", {"kind": "event"})
        if mode not in declared.delivery:
            raise self._error("unsupported", f"{declared.name} is not delivered by {mode}",
                              {"feature": "deliveryMode", "value": mode})
        return declared, _check_arguments(declared.input_schema, req.params.get("arguments"))

    def principal_of(self, core: Core, req: Request) -> str | None:
        ctx = core.modern.context(core, req)
        if self._principal is not None:
            return self._principal(ctx)
        binding = getattr(req.auth, "binding", None)
        return binding if isinstance(binding, str) else None

    async def _start_at(self, name: str, cursor: Any) -> str:
        if cursor is None:
            return await self.log.head(name)
        if not isinstance(cursor, str):
            raise invalid_params("cursor must be a string or null")
        return cursor

    async def _read(self, declared: EventType, arguments: dict[str, Any], after: str, limit: int,
                    oldest: float | None) -> tuple[list[dict[str, Any]], str, bool, bool]:
        """Matching occurrences after `after`: (events, new cursor, truncated, has more)."""
        found: list[dict[str, Any]] = []
        truncated = False
        position = after
        for _ in range(10):  # scan at most ten batches per call
            try:
                entries, gap = await self.log.read(declared.name, position, limit)
            except BadCursor:
                raise invalid_params("Invalid cursor") from None
            truncated = truncated or gap
            for cursor, occurrence in entries:
                position = cursor
                if oldest is not None and _epoch(occurrence["timestamp"]) < oldest:
                    truncated = True
                    continue
                if declared.match(arguments, occurrence["data"]):
                    found.append({**occurrence, "cursor": cursor})
                    if len(found) >= limit:
                        return found, position, truncated, True
            if len(entries) < limit:
                return found, position, truncated, False
        return found, position, truncated, True

    # -- methods -------------------------------------------------------------------------------

    async def _list(self, core: Core, req: Request) -> dict[str, Any]:
        return {"events": [t.wire() for t in self.types.values()]}

    async def _poll(self, core: Core, req: Request) -> dict[str, Any]:
        declared, arguments = self._subject(req, "poll")
        params = req.params
        limit = params.get("maxEvents", self.max_events)
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise invalid_params("maxEvents must be a positive integer")
        limit = min(limit, self.max_events)
        if params.get("cursor") is None:  # start from now: no events, a fresh cursor
            return {"events": [], "cursor": await self.log.head(declared.name), "truncated": False,
                    "hasMore": False, "nextPollMs": self.poll_interval_ms}
        after = await self._start_at(declared.name, params.get("cursor"))
        found, cursor, truncated, more = await self._read(declared, arguments, after, limit,
                                                          self._oldest(params))
        return {"events": [{k: v for k, v in e.items() if k != "cursor"} for e in found],
                "cursor": cursor, "truncated": truncated, "hasMore": more,
                "nextPollMs": self.poll_interval_ms}

    def _oldest(self, params: Mapping[str, Any]) -> float | None:
        age = params.get("maxAgeMs")
        if age is None:
            return None
        if not isinstance(age, int) or isinstance(age, bool) or age < 0:
            raise invalid_params("maxAgeMs must be a non-negative integer")
        return time.time() - age / 1000

    async def _stream(self, core: Core, req: Request) -> dict[str, Any]:
        declared, arguments = self._subject(req, "push")
        position = await self._start_at(declared.name, req.params.get("cursor"))
        oldest = self._oldest(req.params)
        meta = {SUBSCRIPTION_ID: req.id}
        try:
            first, position, truncated, _ = await self._read(declared, arguments, position,
                                                             self.max_events, oldest)
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
            remaining = self.heartbeat - (time.monotonic() - quiet_since)
            if remaining <= 0:
                req.emit({"jsonrpc": "2.0", "method": "notifications/events/heartbeat",
                          "params": {"cursor": position, "_meta": meta}})
                quiet_since = time.monotonic()
                remaining = self.heartbeat
            await self.log.wait(declared.name, position, remaining)
            pending, position, truncated, _ = await self._read(declared, arguments, position,
                                                               self.max_events, None)
            if truncated:  # the stream fell behind the retained backlog
                req.emit({"jsonrpc": "2.0", "method": "notifications/events/active",
                          "params": {"cursor": position, "truncated": True, "_meta": meta}})

    async def _subscribe(self, core: Core, req: Request) -> dict[str, Any]:
        principal = self.principal_of(core, req)
        if principal is None:
            raise self._error("forbidden", "events/subscribe needs an authenticated principal")
        declared, arguments = self._subject(req, "webhook")
        delivery = req.params.get("delivery")
        if not isinstance(delivery, Mapping) or delivery.get("mode", "webhook") != "webhook":
            raise invalid_params("delivery must be {mode: 'webhook', url, secret}")
        url, secret = delivery.get("url"), delivery.get("secret")
        try:
            key = parse_secret(secret)
        except ValueError as exc:
            raise invalid_params(str(exc)) from None
        try:
            _, host, port = check_url(url, allow_http=self.delivery.allow_http)
            await pick_address(host, port, allow_private=self.delivery.allow_private,
                               resolver=self.delivery.resolver)
        except WebhookError as exc:
            if exc.category is not None:
                raise self._error("callback", "the callback endpoint could not be reached",
                                  {"reason": exc.category}) from None
            raise invalid_params(f"delivery.url refused: {exc}") from None
        assert isinstance(url, str) and isinstance(secret, str)
        sub_id = subscription_id(principal, url, declared.name, arguments)
        existing = await self.subscriptions.get(sub_id)
        if existing is None or not existing.get("verified"):
            await self._verify_endpoint(url, key, sub_id)
        ttl = req.params.get("ttlMs", self.default_ttl_ms)
        if ttl is None or not isinstance(ttl, int) or isinstance(ttl, bool):
            ttl = self.max_ttl_ms  # no expiry is not granted: a finite grant is always allowed
        ttl = min(max(ttl, 1000), self.max_ttl_ms)
        expires = time.time() + ttl / 1000
        record = {"id": sub_id, "name": declared.name, "arguments": arguments, "url": url,
                  "secret": secret, "expires": expires, "verified": True, "active": True,
                  "lastDeliveryAt": (existing or {}).get("lastDeliveryAt"),
                  "lastError": None, "key": canonical(arguments)}
        try:
            await self.subscriptions.put(record)
        except OverflowError:
            raise self._error("exhausted", "too many webhook subscriptions",
                              {"limit": "subscriptions"}) from None
        ensure_group = getattr(self.log, "ensure_group", None)
        if self.log.shared and ensure_group is not None:
            await ensure_group([declared.name])  # deliveries start with the next event
        self._start()
        result: dict[str, Any] = {"id": sub_id, "refreshBefore": _iso(expires),
                                  "cursor": await self.log.head(declared.name), "truncated": False}
        if existing is not None:
            result["deliveryStatus"] = {"active": True,
                                        "lastDeliveryAt": existing.get("lastDeliveryAt"),
                                        "lastError": existing.get("lastError")}
        return result

    async def _verify_endpoint(self, url: str, key: bytes, sub_id: str) -> None:
        challenge = secrets.token_urlsafe(24)
        body = json.dumps({"type": "verification", "challenge": challenge}).encode()
        try:
            answer = await self.delivery.send(url, key, f"msg_verification_{secrets.token_hex(8)}",
                                              body, {"X-MCP-Subscription-Id": sub_id}, attempts=1)
        except WebhookError as exc:
            raise self._error("callback", "the callback endpoint could not be verified",
                              {"reason": exc.category or "connection_refused"}) from None
        try:
            echoed = json.loads(answer).get("challenge")
        except (ValueError, AttributeError):
            echoed = None
        if not isinstance(echoed, str) or not hmac.compare_digest(echoed, challenge):
            raise self._error("callback", "the callback endpoint did not echo the challenge",
                              {"reason": "challenge_failed"})

    async def _unsubscribe(self, core: Core, req: Request) -> dict[str, Any]:
        principal = self.principal_of(core, req)
        if principal is None:
            raise self._error("forbidden", "events/unsubscribe needs an authenticated principal")
        name = req.params.get("name")
        if not isinstance(name, str) or name not in self.types:
            raise self._error("not_found", "Unknown event", {"kind": "event"})
        arguments = _check_arguments(self.types[name].input_schema, req.params.get("arguments"))
        delivery = req.params.get("delivery")
        url = delivery.get("url") if isinstance(delivery, Mapping) else None
        if not isinstance(url, str):
            raise invalid_params("delivery.url is required")
        if not await self.subscriptions.delete(subscription_id(principal, url, name, arguments)):
            raise self._error("not_found", "No such subscription", {"kind": "subscription"})
        return {}

    # -- webhook delivery ------------------------------------------------------------------------

    def _start(self) -> None:
        if self._deliverer is not None and not self._deliverer.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._queue is None:
            self._queue = asyncio.Queue(maxsize=10_000)
        self._deliverer = loop.create_task(self._deliver_forever())

    async def stop(self) -> None:
        task, self._deliverer = self._deliverer, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.delivery.aclose()

    async def _next_batch(self) -> list[tuple[str, str, dict[str, Any]]]:
        claim = getattr(self.log, "claim", None)
        if self.log.shared and claim is not None:
            names = [n for n, t in self.types.items() if "webhook" in t.delivery]
            if not names:
                await asyncio.sleep(1.0)
                return []
            batch: list[tuple[str, str, dict[str, Any]]] = await claim(
                names, self.consumer, 1.0, self.reclaim_after)
            return batch
        assert self._queue is not None
        return [await self._queue.get()]

    async def _deliver_forever(self) -> None:
        while True:
            try:
                batch = await self._next_batch()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("events: reading the log for webhook delivery failed; retrying",
                            exc_info=True)
                await asyncio.sleep(1.0)
                continue
            for name, cursor, occurrence in batch:
                await self._deliver(name, cursor, occurrence)
                done = getattr(self.log, "done", None)
                if self.log.shared and done is not None:
                    await done(name, cursor)

    async def _deliver(self, name: str, cursor: str, occurrence: dict[str, Any]) -> None:
        declared = self.types.get(name)
        if declared is None:
            return
        subs = [s for s in await self.subscriptions.for_event(name)
                if s.get("active") and declared.match(s["arguments"], occurrence["data"])]
        body = json.dumps({**occurrence, "cursor": cursor}, separators=(",", ":")).encode()
        await asyncio.gather(*(self._post(sub, occurrence["eventId"], body) for sub in subs))

    async def _post(self, sub: dict[str, Any], event_id: str, body: bytes) -> None:
        try:
            await self.delivery.send(sub["url"], parse_secret(sub["secret"]), event_id, body,
                                     {"X-MCP-Subscription-Id": sub["id"]})
        except WebhookError as exc:
            sub = {**sub, "lastError": exc.category or "connection_refused"}
            log.info("events: delivery to subscription %s failed (%s)", sub["id"], sub["lastError"])
        else:
            self.delivered += 1
            sub = {**sub, "lastDeliveryAt": _iso(time.time()), "lastError": None}
        with contextlib.suppress(Exception):
            if await self.subscriptions.get(sub["id"]) is not None:
                await self.subscriptions.put(sub)
