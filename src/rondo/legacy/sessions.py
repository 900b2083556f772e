"""Handshake-era (2025-11-25) sessions: what each client declared at `initialize`, what it has
open, and the bounded table they live in.

Sessions live in a bounded table: idle ones expire after `idle_timeout`; when `max_sessions`
are live, the least recently used idle session is evicted to make room (its client gets 404
and, as the spec requires, starts a new session). Only when every session is busy is a new one
refused. Nothing runs per session in the background: expiry is checked on use.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.inflight import InFlight
from ..wire.errors import INTERNAL_ERROR, SERVER_BUSY, McpError
from ..wire.meta import LEGACY_VERSIONS, LOG_LEVEL_RANK

log = logging.getLogger("rondo.legacy")

Send = Callable[[dict[str, Any]], None]

LATEST_LEGACY = LEGACY_VERSIONS[0]


@dataclass(frozen=True)
class LegacyConfig:
    """How the 2025-11-25 era is served.

    `idle_timeout`: seconds without a request before a session expires. `max_sessions`: hard cap
    on live sessions (least recently used idle one evicted beyond it). `ask_timeout`: seconds a
    `ctx.ask` waits for the client's answer. `retry_ms`: the SSE `retry` hint sent with priming
    events. `log_level`: level a session logs at before the client calls `logging/setLevel`
    (`None`: nothing until it asks). `workers`: threads for plain `def` handlers that take a
    Context (a `ctx.ask` there blocks its thread until the answer arrives).
    Bounds (docs/limits.md): `max_replay_bytes` of SSE events kept for `Last-Event-ID` replay
    per session and `max_replay_total` over all sessions (the oldest go first);
    `max_get_streams` open GET streams per session (409 beyond).
    """

    idle_timeout: float = 600.0
    max_sessions: int = 10_000
    ask_timeout: float = 300.0
    retry_ms: int = 1000
    log_level: str | None = None
    workers: int = 64
    max_replay_bytes: int = 256 * 1024
    max_replay_total: int = 64 * 1024 * 1024
    max_get_streams: int = 4

    def __post_init__(self) -> None:
        if self.max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        for name in ("max_replay_bytes", "max_replay_total", "max_get_streams"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"LegacyConfig.{name} must be a positive integer")
        if self.idle_timeout <= 0 or self.ask_timeout <= 0:
            raise ValueError("idle_timeout and ask_timeout must be positive")
        if self.log_level is not None and self.log_level not in LOG_LEVEL_RANK:
            raise ValueError(f"unknown log level {self.log_level!r}")


def negotiate(requested: Any) -> str:
    """The version to answer an `initialize` with: the client's if we speak it, else our newest."""
    return requested if requested in LEGACY_VERSIONS else LATEST_LEGACY


class LegacySession:
    """One handshake-era client: what it declared at `initialize` and what it has open."""

    __slots__ = (
        "id",
        "version",
        "client_info",
        "capabilities",
        "log_level",
        "initialized",
        "subscriptions",
        "last_seen",
        "inflight",
        "pending",
        "next_id",
        "closed",
        "outlet",
        "transport",
        "on_close",
        "ask_timeout",
        "completed",
        "principal",
        "hidden",
    )

    def __init__(self, sid: str, version: str, capabilities: dict[str, Any],
                 client_info: dict[str, Any] | None, log_level: str | None,
                 ask_timeout: float = 300.0) -> None:
        self.id = sid
        self.version = version
        self.capabilities = capabilities
        self.client_info = client_info
        self.log_level = log_level
        self.initialized = False
        self.subscriptions: set[str] | None = None
        self.last_seen = time.monotonic()
        self.inflight = InFlight()
        self.pending: dict[int, asyncio.Future[Any]] | None = None
        self.next_id = 0
        self.closed = False
        # Where messages that belong to no request go (list changes, resource updates).
        self.outlet: Send | None = None
        self.transport: Any = None  # the transport's own per-session state
        self.on_close: Callable[[LegacySession], None] | None = None
        self.ask_timeout = ask_timeout
        self.completed = False  # answered a request: an initialize flood evicts others first
        self.principal: str | None = None  # rondo.auth: who opened it (HttpGuard.bind_session)
        # URIs whose updates this session's caller may not hear, though a subscription covers
        # them (a mount's `visible=`: gateway/transform.py sets it); None: every covered URI.
        self.hidden: Callable[[str], bool] | None = None

    @property
    def busy(self) -> bool:
        """Running a request, or holding a live stream: not idle, whatever the clock says."""
        if self.inflight:
            return True
        transport = self.transport
        return transport is not None and bool(getattr(transport, "live", False))

    # -- requests to the client ----------------------------------------------------------------

    def request(self, method: str, params: dict[str, Any], send: Send) -> tuple[int, asyncio.Future[Any]]:
        """Send a request to the client; the future resolves with its result (or error)."""
        if self.closed:
            raise ConnectionError("the session has ended")
        self.next_id += 1
        rid = self.next_id
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self.pending is None:
            self.pending = {}
        self.pending[rid] = fut
        send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid, fut

    def forget(self, rid: int) -> None:
        if self.pending is not None:
            self.pending.pop(rid, None)

    def deliver(self, msg: Mapping[str, Any]) -> bool:
        """Route the client's response to the request waiting for it; False if none is."""
        rid = msg.get("id")
        fut = self.pending.pop(rid, None) if self.pending and isinstance(rid, int) else None
        if fut is None or fut.done():
            return False
        if "error" in msg:
            error = msg["error"]
            if not isinstance(error, dict):
                error = {"code": INTERNAL_ERROR, "message": "malformed error"}
            fut.set_exception(ClientRefused(error))
        else:
            fut.set_result(msg.get("result"))
        return True

    def notify(self, msg: dict[str, Any]) -> None:
        if self.outlet is not None and not self.closed:
            self.outlet(msg)

    # -- ending --------------------------------------------------------------------------------

    def close(self) -> None:
        """End the session: cancel its requests and every answer it still waits for."""
        if self.closed:
            return
        self.closed = True
        self.inflight.cancel_all()
        if self.pending:
            for fut in self.pending.values():
                if not fut.done():
                    fut.cancel()
            self.pending = None
        if self.on_close is not None:
            self.on_close(self)

    def __repr__(self) -> str:
        return f"<LegacySession {self.id[:8]} {self.version}>"


class ClientRefused(Exception):
    """The client answered one of our requests (a back-channel question) with a JSON-RPC error."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('message', 'error')} ({error.get('code')})")
        self.error = error


class SessionLimit(McpError):
    def __init__(self) -> None:
        super().__init__(SERVER_BUSY, "Too many active sessions: try again later")


class SessionTable:
    """Live sessions by id, least recently used first. Bounded, expired lazily."""

    def __init__(self, max_sessions: int, idle_timeout: float) -> None:
        self.max = max_sessions
        self.idle = idle_timeout
        self._by_id: dict[str, LegacySession] = {}

    def __len__(self) -> int:
        return len(self._by_id)

    def __iter__(self) -> Iterator[LegacySession]:
        return iter(tuple(self._by_id.values()))

    def get(self, sid: str) -> LegacySession | None:
        by_id = self._by_id
        session = by_id.get(sid)
        if session is None:
            return None
        now = time.monotonic()
        if now - session.last_seen > self.idle and not session.busy:
            self.drop(session)
            return None
        session.last_seen = now
        by_id[sid] = by_id.pop(sid)  # most recently used goes last
        self.sweep(now, limit=2)
        return session

    def add(self, session: LegacySession) -> None:
        now = time.monotonic()
        self.sweep(now, limit=8)
        if len(self._by_id) >= self.max:
            self._evict_one()
        self._by_id[session.id] = session

    def drop(self, session: LegacySession) -> None:
        if self._by_id.get(session.id) is session:
            del self._by_id[session.id]
        session.close()

    def sweep(self, now: float, limit: int) -> None:
        """Expire up to `limit` idle sessions from the old end (amortised O(1) per call)."""
        by_id = self._by_id
        for _ in range(limit):
            if not by_id:
                return
            sid = next(iter(by_id))
            session = by_id[sid]
            if now - session.last_seen <= self.idle:
                return
            if session.busy:
                session.last_seen = now
                by_id[sid] = by_id.pop(sid)
                continue
            self.drop(session)

    def _evict_one(self) -> None:
        """Make room, least recently used first: a session that never completed a request
        (an `initialize` flood), then any idle one, then one that only holds streams open."""
        sessions = tuple(self._by_id.values())
        tests: tuple[Callable[[LegacySession], bool], ...] = (
            lambda s: not s.busy and not s.completed,
            lambda s: not s.busy,
            lambda s: not s.inflight and not s.pending,
        )
        for test in tests:
            for session in sessions:
                if test(session):
                    log.info("session cap reached: evicting %r", session)
                    self.drop(session)
                    return
        raise SessionLimit()

    def close_all(self) -> None:
        for session in tuple(self._by_id.values()):
            self.drop(session)


class LegacyCall:
    """One legacy request in flight: where its messages go and the questions it has open."""

    __slots__ = ("session", "send", "loop", "thread", "asks", "closer", "asking")

    def url_complete(self, ctx: Any, key: str) -> None:
        """`ctx.url_complete(key)` on this session: `notifications/elicitation/complete`."""
        from .ask import elicitation_complete

        elicitation_complete(ctx, self, key)

    def __init__(self, session: LegacySession, send: Send, closer: Callable[[], None] | None = None) -> None:
        self.session = session
        self.send = send
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()
        self.asks: set[asyncio.Future[Any]] | None = None
        self.closer = closer
        self.asking: dict[str, asyncio.Future[Any]] | None = None  # open questions, by key

    def emit(self, msg: dict[str, Any]) -> None:
        """Send a message on this request's channel; safe from a handler's worker thread."""
        if threading.get_ident() == self.thread:
            self.send(msg)
        else:
            self.loop.call_soon_threadsafe(self.send, msg)

    def close_stream(self) -> None:
        if self.closer is None:
            return
        if threading.get_ident() == self.thread:
            self.closer()
        else:
            self.loop.call_soon_threadsafe(self.closer)

    def withdraw(self, key: str) -> bool:
        """The question `key` is no longer needed (a proxied upstream gave up on it): the
        client is told (`notifications/cancelled` for it) and the round goes on without its
        answer. False when no such question is open."""
        from .ask import Withdrawn

        future = (self.asking or {}).get(key)
        if future is None or future.done():
            return False
        future.set_exception(Withdrawn(key))
        return True

    def cancel_asks(self) -> None:
        if self.asks:
            for fut in tuple(self.asks):
                fut.cancel()
