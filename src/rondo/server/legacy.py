"""The 2025-11-25 dialect: `initialize`, sessions, and results shaped for handshake-era clients.

Transport-free. A transport owns a `LegacyDialect` (one per HTTP app, stdio process or memory
connection), asks it to `initialize` a session, then hands it every later message of that
session: requests (`answer`), notifications (`notification`) and the client's answers to our own
requests (`deliver`). The same components serve both eras: requests run through `LegacyCore`,
the modern `Core` with a legacy `Context` (`era == "legacy"`, so `ctx.ask` goes over the
back-channel, see `legacy_ask.py`) and legacy result shapes.

Sessions live in a bounded table: idle ones expire after `idle_timeout`; when `max_sessions`
are live, the least recently used idle session is evicted to make room (its client gets 404
and, as the spec requires, starts a new session). Only when every session is busy is a new one
refused. Nothing runs per session in the background: expiry is checked on use.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..wire.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    McpError,
    internal_error,
    invalid_params,
    method_not_found,
)
from ..wire.meta import LEGACY_VERSIONS, LOG_LEVEL_RANK, PROTOCOL_VERSION
from .context import Context
from .dispatch import Core, error_response, request_shape

if TYPE_CHECKING:
    from .server import Server

log = logging.getLogger("rondo.legacy")

Send = Callable[[dict[str, Any]], None]

RESOURCE_NOT_FOUND = -32002  # the 2025-11-25 code; 2026-07-28 uses -32602 (SEP-2164)
SESSION_NOT_FOUND = -32001
SERVER_BUSY = -32000
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
    """

    idle_timeout: float = 600.0
    max_sessions: int = 10_000
    ask_timeout: float = 300.0
    retry_ms: int = 1000
    log_level: str | None = None
    workers: int = 64

    def __post_init__(self) -> None:
        if self.max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        if self.idle_timeout <= 0 or self.ask_timeout <= 0:
            raise ValueError("idle_timeout and ask_timeout must be positive")
        if self.log_level is not None and self.log_level not in LOG_LEVEL_RANK:
            raise ValueError(f"unknown log level {self.log_level!r}")


def negotiate(requested: Any) -> str:
    """The version to answer an `initialize` with: the client's if we speak it, else our newest."""
    return requested if requested in LEGACY_VERSIONS else LATEST_LEGACY


def is_legacy_start(msg: Mapping[str, Any]) -> bool:
    """Is this message a handshake-era `initialize` (no modern per-request `_meta`)?"""
    if msg.get("method") != "initialize":
        return False
    params = msg.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return not (isinstance(meta, dict) and PROTOCOL_VERSION in meta)


def has_modern_meta(msg: Mapping[str, Any]) -> bool:
    params = msg.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and PROTOCOL_VERSION in meta


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
        "principal",
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
        self.inflight: dict[Any, asyncio.Task[Any]] | None = None
        self.pending: dict[int, asyncio.Future[Any]] | None = None
        self.next_id = 0
        self.closed = False
        # Where messages that belong to no request go (list changes, resource updates).
        self.outlet: Send | None = None
        self.transport: Any = None  # the transport's own per-session state
        self.on_close: Callable[[LegacySession], None] | None = None
        self.ask_timeout = ask_timeout
        self.principal: str | None = None  # rondo.auth: who opened it (HttpGuard.bind_session)

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
            fut.set_exception(ClientError(error))
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
        if self.inflight:
            for task in list(self.inflight.values()):
                task.cancel()
        if self.pending:
            for fut in self.pending.values():
                if not fut.done():
                    fut.cancel()
            self.pending = None
        if self.on_close is not None:
            self.on_close(self)

    def __repr__(self) -> str:
        return f"<LegacySession {self.id[:8]} {self.version}>"


class ClientError(Exception):
    """The client answered one of our requests with a JSON-RPC error."""

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
        for session in tuple(self._by_id.values()):
            if not session.busy:
                log.info("session cap reached: evicting least recently used %r", session)
                self.drop(session)
                return
        raise SessionLimit()

    def close_all(self) -> None:
        for session in tuple(self._by_id.values()):
            self.drop(session)


class LegacyCall:
    """One legacy request in flight: where its messages go and the questions it has open."""

    __slots__ = ("session", "send", "loop", "thread", "asks", "closer")

    def __init__(self, session: LegacySession, send: Send, closer: Callable[[], None] | None = None) -> None:
        self.session = session
        self.send = send
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()
        self.asks: set[asyncio.Future[Any]] | None = None
        self.closer = closer

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

    def cancel_asks(self) -> None:
        if self.asks:
            for fut in tuple(self.asks):
                fut.cancel()


class _Env:
    """What `Core` reads from an envelope, filled from the session instead of `_meta`."""

    __slots__ = ("meta", "version", "capabilities", "client_info", "log_level", "session", "call")

    def __init__(self, session: LegacySession, call: LegacyCall, params: Mapping[str, Any]) -> None:
        meta = params.get("_meta")
        self.meta = meta if isinstance(meta, dict) else {}
        self.version = session.version
        self.capabilities = session.capabilities
        self.client_info = session.client_info
        self.log_level = session.log_level
        self.session = session
        self.call = call


class LegacyCore(Core):
    """The modern core's handlers with legacy contexts, methods and result shapes."""

    def __init__(self, server: Server, workers: int = 64) -> None:
        super().__init__(server)
        self.subscriptions = server.core.subscriptions  # one fan-out for both eras
        for modern_only in ("server/discover", "subscriptions/listen"):
            self._methods.pop(modern_only, None)
        self._methods.update(
            {
                "ping": self._ping,
                "logging/setLevel": self._set_level,
                "resources/subscribe": self._subscribe,
                "resources/unsubscribe": self._subscribe,
            }
        )
        self._gates["resources/subscribe"] = "resources"
        self._gates["resources/unsubscribe"] = "resources"
        self._workers = workers
        self._executor: ThreadPoolExecutor | None = None

    def context(self, rid, method, params, env, emit, auth, era="legacy") -> Context:
        return Context(
            self.server,
            request_id=rid,
            request_method=method,
            request_params=params,
            protocol_version=env.version,
            client_info=env.client_info,
            client_capabilities=env.capabilities,
            era="legacy",
            auth=auth,
            log_level=env.session.log_level,
            emit=env.call.emit,
            session=env.call,
        )

    async def run(self, ctx: Context, fn: Callable[..., Any], sig: Any, kwargs: dict[str, Any]) -> Any:
        """Plain `def` handlers that take a Context run in a worker thread, so `ctx.ask` may block."""
        if sig.is_async or sig.context_param is None:
            return await super().run(ctx, fn, sig, kwargs)
        kwargs[sig.context_param] = ctx
        ctx._sync = True
        loop = asyncio.get_running_loop()
        ctx._loop = loop
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self._workers, thread_name_prefix="rondo-legacy")
        return await loop.run_in_executor(self._executor, lambda: fn(**kwargs))

    async def dispatch(self, rid, method, params, env, *, emit=None, auth=None) -> dict[str, Any]:
        handler = self._methods.get(method)
        if handler is None:
            raise method_not_found(method)
        gate = self._gates.get(method)
        if gate is not None and gate not in self.server.capabilities():
            raise method_not_found(method)
        try:
            result: dict[str, Any] = await handler(rid, method, params, env, env.call.emit, auth)
        except McpError as exc:
            if method == "resources/read" and exc.code == INVALID_PARAMS and exc.message == "Resource not found":
                raise McpError(RESOURCE_NOT_FOUND, "Resource not found", exc.data) from None
            raise
        return legacy_result(method, result)

    def shutdown(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

    # -- legacy-only methods -----------------------------------------------------------------

    async def _ping(self, rid, method, params, env, emit, auth) -> dict[str, Any]:
        return {}

    async def _set_level(self, rid, method, params, env, emit, auth) -> dict[str, Any]:
        level = params.get("level")
        if level not in LOG_LEVEL_RANK:
            raise invalid_params(f"Unknown log level {level!r}")
        env.session.log_level = level
        return {}

    async def _subscribe(self, rid, method, params, env, emit, auth) -> dict[str, Any]:
        if not self.server.capabilities().get("resources", {}).get("subscribe"):
            raise method_not_found(method)
        uri = params.get("uri")
        if not isinstance(uri, str) or not uri:
            raise invalid_params(f"{method} needs a uri")
        session = env.session
        if method == "resources/subscribe":
            if session.subscriptions is None:
                session.subscriptions = set()
            session.subscriptions.add(uri)
        elif session.subscriptions is not None:
            session.subscriptions.discard(uri)
        return {}


# -- result shapes ---------------------------------------------------------------------------

_MODERN_ONLY_KEYS = ("resultType", "ttlMs", "cacheScope")


def legacy_result(method: str, result: dict[str, Any]) -> dict[str, Any]:
    """Reshape a core result for a 2025-11-25 client (spec digest §1.8, §10 item 19)."""
    for key in _MODERN_ONLY_KEYS:
        result.pop(key, None)
    if method == "tools/list":
        result["tools"] = [legacy_tool(tool) for tool in result["tools"]]
    elif method == "tools/call":
        structured = result.get("structuredContent")
        if structured is not None and not isinstance(structured, dict):
            # Only objects are valid there in 2025-11-25; the text block already carries it.
            result = {k: v for k, v in result.items() if k != "structuredContent"}
    return result


def legacy_tool(wire: dict[str, Any]) -> dict[str, Any]:
    schema = wire.get("outputSchema")
    if schema is not None and schema.get("type") != "object":
        return {k: v for k, v in wire.items() if k != "outputSchema"}
    return wire


# -- the dialect ---------------------------------------------------------------------------


class LegacyDialect:
    """Every handshake-era session of one transport, and how their messages are answered."""

    def __init__(self, server: Server, config: LegacyConfig | None = None) -> None:
        self.server = server
        self.config = config or LegacyConfig()
        self.core = LegacyCore(server, self.config.workers)
        self.sessions = SessionTable(self.config.max_sessions, self.config.idle_timeout)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        server.core.subscriptions.legacy_hooks.append(self._fanout)

    # -- handshake -------------------------------------------------------------------------

    def initialize(self, msg: Mapping[str, Any]) -> tuple[LegacySession | None, dict[str, Any]]:
        """Answer `initialize`: a new session and its response, or (None, error response)."""
        rid = msg.get("id")
        try:
            rid, method, params, is_request = request_shape(msg)
            if not is_request:
                raise McpError(INVALID_REQUEST, "initialize must be a request")
            caps = params.get("capabilities", {})
            info = params.get("clientInfo")
            if not isinstance(caps, dict):
                raise invalid_params("initialize: capabilities must be an object")
            if info is not None and not isinstance(info, dict):
                raise invalid_params("initialize: clientInfo must be an object")
            version = negotiate(params.get("protocolVersion"))
            session = LegacySession(secrets.token_urlsafe(18), version, caps, info,
                                    self.config.log_level, self.config.ask_timeout)
            self._remember_loop()
            self.sessions.add(session)
        except McpError as exc:
            return None, error_response(rid if _valid_id(rid) else None, exc)
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": self.server.capabilities(),
            "serverInfo": self.server.info,
        }
        if self.server.instructions is not None:
            result["instructions"] = self.server.instructions
        return session, {"jsonrpc": "2.0", "id": rid, "result": result}

    def _remember_loop(self) -> None:
        with contextlib.suppress(RuntimeError):
            self._loop = asyncio.get_running_loop()
            self._thread = threading.get_ident()

    def end(self, session: LegacySession) -> None:
        self.sessions.drop(session)

    def close_all(self) -> None:
        self.sessions.close_all()
        self.core.shutdown()
        with contextlib.suppress(ValueError):
            self.server.core.subscriptions.legacy_hooks.remove(self._fanout)

    # -- messages of a session -------------------------------------------------------------

    async def answer(self, session: LegacySession, msg: dict[str, Any], call: LegacyCall,
                     auth: Any = None) -> dict[str, Any] | None:
        """The response to one request of `session` (None if it was cancelled). Never raises."""
        rid = msg.get("id")
        try:
            rid, method, params, _ = request_shape(msg)
            if method == "initialize":
                raise McpError(INVALID_REQUEST, "Invalid Request: the session is already initialized")
            result = await self.core.dispatch(rid, method, params, _Env(session, call, params), auth=auth)
            return {"jsonrpc": "2.0", "id": rid, "result": result}
        except McpError as exc:
            return error_response(rid if _valid_id(rid) else None, exc)
        except asyncio.CancelledError:
            return None
        except Exception:
            log.exception("unexpected failure answering a legacy request")
            return error_response(rid if _valid_id(rid) else None, internal_error())
        finally:
            call.cancel_asks()

    def track(self, session: LegacySession, rid: Any, task: asyncio.Task[Any]) -> None:
        """Remember a running request so `notifications/cancelled` and session end can stop it."""
        if not _valid_id(rid):
            return
        if session.inflight is None:
            session.inflight = {}
        session.inflight[rid] = task

        def done(_: Any) -> None:
            if session.inflight is not None and session.inflight.get(rid) is task:
                del session.inflight[rid]

        task.add_done_callback(done)

    def notification(self, session: LegacySession, msg: Mapping[str, Any]) -> None:
        method = msg.get("method")
        if method == "notifications/initialized":
            session.initialized = True
        elif method == "notifications/cancelled":
            params = msg.get("params")
            rid = params.get("requestId") if isinstance(params, dict) else None
            task = session.inflight.get(rid) if session.inflight and _valid_id(rid) else None
            if task is not None:
                task.cancel()
        # notifications/roots/list_changed and anything else: nothing to do.

    # -- fan-out of change notifications ---------------------------------------------------------

    def _fanout(self, kind: str, payload: Any) -> None:
        loop = self._loop
        if loop is not None and threading.get_ident() != self._thread:
            loop.call_soon_threadsafe(self._fanout, kind, payload)
            return
        note: dict[str, Any]
        if kind == "list_changed":
            note = {"jsonrpc": "2.0", "method": f"notifications/{payload}/list_changed"}
            for session in self.sessions:
                session.notify(note)
        elif kind == "resource_updated":
            note = {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": payload}}
            for session in self.sessions:
                subs = session.subscriptions
                if subs and any(_covers(sub, payload) for sub in subs):
                    session.notify(note)


def _covers(subscribed: str, uri: str) -> bool:
    if uri == subscribed:
        return True
    base = subscribed if subscribed.endswith("/") else subscribed + "/"
    return uri.startswith(base)


def _valid_id(rid: Any) -> bool:
    return rid is not None and not isinstance(rid, bool) and isinstance(rid, str | int)


# -- one session over a message pipe (stdio, memory) -----------------------------------------


NOT_LEGACY = object()


class PipeSession:
    """Serves one legacy session over an ordered message pipe: stdio's lines, a memory link.

    `write` sends one message to the client. Requests run as tasks; their progress, logs and
    server-to-client requests go out through `write` as they happen.
    """

    def __init__(self, server: Server, write: Send, *, config: LegacyConfig | None = None,
                 auth: Any = None) -> None:
        self.dialect = LegacyDialect(server, config)
        self._write = write
        self.auth = auth
        self.session: LegacySession | None = None

    def start(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Answer the `initialize` that opened the pipe's legacy session."""
        session, response = self.dialect.initialize(msg)
        if session is not None:
            self.session = session
            session.outlet = self._write
        return response

    def feed(self, msg: dict[str, Any], send: Send | None = None) -> asyncio.Task[Any] | None:
        """Take one message after `initialize`; requests return their running task.

        `send` receives what the request produces (notifications, requests to the client, the
        response); by default the pipe's own `write`.
        """
        session = self.session
        assert session is not None
        if "method" not in msg:
            if "id" in msg and ("result" in msg or "error" in msg):
                session.deliver(msg)
            return None
        if "id" not in msg:
            self.dialect.notification(session, msg)
            return None
        rid = msg["id"]
        out = send or self._write
        if msg.get("method") == "initialize":
            out(error_response(rid if _valid_id(rid) else None, McpError(
                INVALID_REQUEST, "Invalid Request: the session is already initialized")))
            return None
        if _valid_id(rid) and session.inflight and rid in session.inflight:
            out(error_response(None, McpError(INVALID_REQUEST, f"Duplicate request id {rid!r}")))
            return None
        call = LegacyCall(session, send or self._write)
        task = asyncio.ensure_future(self._run(session, msg, call))
        self.dialect.track(session, rid, task)
        return task

    async def _run(self, session: LegacySession, msg: dict[str, Any], call: LegacyCall) -> None:
        response = await self.dialect.answer(session, msg, call, self.auth)
        if response is not None and not session.closed:
            call.send(response)

    async def exchange(self, msg: dict[str, Any], on_message: Send) -> Any:
        """One message in, its response out (None for notifications and answers), for in-process
        links. Returns `NOT_LEGACY` when the message belongs on the 2026-07-28 path."""
        if self.session is None:
            return self.start(msg) if is_legacy_start(msg) else NOT_LEGACY
        if has_modern_meta(msg):
            return NOT_LEGACY
        rid = msg.get("id")
        if "method" not in msg or "id" not in msg:
            self.feed(msg)
            return None
        box: list[dict[str, Any]] = []

        def send(out: dict[str, Any]) -> None:
            if "method" not in out and out.get("id") == rid:
                box.append(out)
            else:
                on_message(out)

        task = self.feed(msg, send)
        if task is not None:  # None: refused at once (a duplicate id, a second initialize)
            await task
        return box[0] if box else None

    async def drain(self) -> None:
        """End of input: questions to the client can no longer be answered; finish the rest."""
        session = self.session
        if session is not None:
            if session.pending:
                for fut in session.pending.values():
                    fut.cancel()
            if session.inflight:
                await asyncio.gather(*session.inflight.values(), return_exceptions=True)
        self.close()

    def close(self) -> None:
        """The client is gone: cancel what waits on it."""
        self.dialect.close_all()


__all__ = [
    "ClientError",
    "LegacyCall",
    "LegacyConfig",
    "LegacyCore",
    "LegacyDialect",
    "LegacySession",
    "PipeSession",
    "RESOURCE_NOT_FOUND",
    "SESSION_NOT_FOUND",
    "SessionLimit",
    "SessionTable",
    "close_stream",
    "has_modern_meta",
    "is_legacy_start",
    "legacy_result",
    "negotiate",
]


def close_stream(ctx: Context) -> None:
    """End this request's SSE stream now; the client resumes it with `Last-Event-ID`.

    2025-11-25 SSE polling: a long handler can free its connection and let the client poll for
    the rest (progress, server requests, the result), which the server replays on the client's
    GET. A no-op on the 2026-07-28 wire and on transports without streams (stdio, memory).
    """
    call = ctx._session
    if isinstance(call, LegacyCall):
        call.close_stream()
