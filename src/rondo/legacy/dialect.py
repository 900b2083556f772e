"""The 2025-11-25 dialect: `initialize`, sessions, and results shaped for handshake-era clients.

Transport-free. A transport owns a `LegacyDialect` (one per HTTP app, stdio process or memory
connection), asks it to `initialize` a session, then hands it every later message of that
session: requests (`answer`), notifications (`notification`) and the client's answers to our own
requests (`session.deliver`). The same method table and components serve both eras; this
dialect supplies what differs: contexts filled from the session, legacy result shapes, and
`ctx.ask` as a real server-to-client request over the back-channel (`legacy_ask.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from ..core.failures import masked_internal_error
from ..core.modern import run_component
from ..core.subscriptions import covers
from ..mrtr.result import InputRequired
from ..server.context import Context
from ..server.request import Request
from ..wire.envelope import Envelope
from ..wire.era import LEGACY as LEGACY_ERA
from ..wire.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LEGACY_RESOURCE_NOT_FOUND,
    McpError,
    invalid_params,
)
from ..wire.jsonrpc import error_response, readable_id, request_shape, result_response
from .sessions import LegacyCall, LegacyConfig, LegacySession, SessionTable, negotiate

if TYPE_CHECKING:
    from ..core.core import Core
    from ..server.server import Server

log = logging.getLogger("rondo.legacy")

_MODERN_ONLY_KEYS = ("resultType", "ttlMs", "cacheScope")


class LegacyDialect:
    """Every handshake-era session of one transport, and how their messages are answered."""

    era = LEGACY_ERA

    def __init__(self, server: Server, config: LegacyConfig | None = None) -> None:
        self.server = server
        self.core: Core = server.core
        self.config = config or LegacyConfig()
        self.sessions = SessionTable(self.config.max_sessions, self.config.idle_timeout)
        self._executor: ThreadPoolExecutor | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self.core.subscriptions.legacy_hooks.append(self._fanout)
        from ..core.replicas import session_prefix  # fleet hook: ids name their worker

        self._sid_prefix = session_prefix()

    # -- the dialect's members (what the core asks of an era) ------------------------------------

    def context(self, core: Core, req: Request) -> Context:
        return Context.for_request(core.server, req, self)

    def finish(self, req: Request, result: dict[str, Any]) -> dict[str, Any]:
        return legacy_result(req.method, result)

    def ask(self, ctx: Context, requests: Mapping[str, Mapping[str, Any]], single: str | None) -> Any:
        from .ask import ask_back_channel

        return ask_back_channel(ctx, requests, single=single)

    async def run(self, ctx: Context, fn: Callable[..., Any], sig: Any, kwargs: dict[str, Any]) -> Any:
        """Plain `def` handlers that take a Context run in a worker thread, so `ctx.ask` may block."""
        if sig.is_async or sig.context_param is None:
            return await run_component(ctx, fn, sig, kwargs)
        kwargs[sig.context_param] = ctx
        loop = asyncio.get_running_loop()
        ctx.runs_inline(loop)
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self.config.workers, thread_name_prefix="rondo-legacy")
        return await loop.run_in_executor(self._executor, lambda: fn(**kwargs))

    def input_required(self, ctx: Context, outcome: InputRequired) -> dict[str, Any]:
        """Seal and admit it as on 2026-07-28; `settle` then answers it in-process."""
        from .rounds import admit_legacy

        return admit_legacy(ctx, outcome)

    async def settle(self, core: Core, req: Request, result: dict[str, Any], again: Any) -> dict[str, Any]:
        """A handshake-era client cannot retry with answers: ask over the back-channel and run
        the request again in-process, round after round (`legacy_rounds.py`)."""
        if result.get("resultType") != "input_required":
            return result
        from .rounds import settle

        return await settle(req, result, again)

    # -- handshake -------------------------------------------------------------------------

    def initialize(self, msg: Mapping[str, Any]) -> tuple[LegacySession | None, dict[str, Any]]:
        """Answer `initialize`: a new session and its response, or (None, error response)."""
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
            session = LegacySession(self._sid_prefix + secrets.token_urlsafe(18), version, caps, info,
                                    self.config.log_level, self.config.ask_timeout)
            self._remember_loop()
            self.sessions.add(session)
        except McpError as exc:
            return None, error_response(readable_id(msg), exc)
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": self.server.capabilities(),
            "serverInfo": self.server.info,
        }
        if self.server.instructions is not None:
            result["instructions"] = self.server.instructions
        return session, result_response(rid, result)

    async def open(self, msg: Mapping[str, Any], auth: Any = None,
                   headers: Any = None) -> tuple[LegacySession | None, dict[str, Any]]:
        """`initialize` through the server's middleware (a rate limiter, a request log), as
        every other request: a session and its response, or (None, error response).

        The chain sees an `initialize` request of this era, with the version, capabilities and
        client info the client declared; its endpoint is `initialize` itself. A middleware that
        refuses (raises `McpError`) opens no session; one that fails after the session opened
        closes it again. Without middleware this is `initialize`, with no await on the way.
        """
        chain = self.core.middleware
        if not chain:
            return self.initialize(msg)
        try:
            rid, method, params, is_request = request_shape(msg)
        except McpError:
            return self.initialize(msg)  # initialize words the refusal
        if not is_request:
            return self.initialize(msg)
        caps, info = params.get("capabilities"), params.get("clientInfo")
        version = params.get("protocolVersion")
        env = Envelope({}, version if isinstance(version, str) else "",
                       caps if isinstance(caps, dict) else {},
                       info if isinstance(info, dict) else None, self.config.log_level)
        req = Request(rid, method, params, env, self, auth=auth, headers=headers)
        opened: list[LegacySession] = []

        async def endpoint() -> dict[str, Any]:
            session, response = self.initialize(msg)
            if session is None:
                error = response["error"]
                raise McpError(error["code"], error["message"], error.get("data"))
            opened.append(session)
            result: dict[str, Any] = response["result"]
            return result

        from ..core.middleware import RequestView, run_chain

        try:
            result = await run_chain(chain, RequestView(req, self.server), endpoint)
            if not isinstance(result, dict) or not opened:
                raise McpError(INTERNAL_ERROR, "Internal error: middleware must answer initialize "
                                               "through call_next (it opens the session)")
        except McpError as exc:
            for session in opened:
                self.sessions.drop(session)
            return None, error_response(rid, exc)
        except Exception:
            for session in opened:
                self.sessions.drop(session)
            return None, error_response(rid, masked_internal_error(
                log, "unexpected failure in middleware around initialize"))
        return opened[0], result_response(rid, result)

    def _remember_loop(self) -> None:
        with contextlib.suppress(RuntimeError):
            self._loop = asyncio.get_running_loop()
            self._thread = threading.get_ident()

    def end(self, session: LegacySession) -> None:
        self.sessions.drop(session)

    def close_all(self) -> None:
        self.sessions.close_all()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
        with contextlib.suppress(ValueError):
            self.core.subscriptions.legacy_hooks.remove(self._fanout)

    # -- messages of a session -------------------------------------------------------------

    async def answer(self, session: LegacySession, msg: dict[str, Any], call: LegacyCall,
                     auth: Any = None, headers: Any = None) -> dict[str, Any] | None:
        """The response to one request of `session` (None if it was cancelled). Never raises."""
        rid = readable_id(msg)
        try:
            rid, method, params, _ = request_shape(msg)
            if method == "initialize":
                raise McpError(INVALID_REQUEST, "Invalid Request: the session is already initialized")
            env = Envelope({}, session.version, session.capabilities, session.client_info,
                           session.log_level)
            req = Request(rid, method, params, env, self, emit=call.emit, auth=auth, call=call,
                          headers=headers)
            return result_response(rid, await self.core.dispatch(req))
        except McpError as exc:
            return error_response(rid, _legacy_error(msg, exc))
        except asyncio.CancelledError:
            return None
        except Exception:
            return error_response(rid, masked_internal_error(
                log, "unexpected failure answering a legacy request"))
        finally:
            session.completed = True
            call.cancel_asks()

    def notification(self, session: LegacySession, msg: Mapping[str, Any]) -> None:
        method = msg.get("method")
        if method == "notifications/initialized":
            session.initialized = True
        elif method == "notifications/cancelled":
            session.inflight.cancel_from(msg.get("params"))
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
                if subs and any(covers(sub, payload) for sub in subs) \
                        and (session.hidden is None or not session.hidden(payload)):
                    session.notify(note)


def _legacy_error(msg: Mapping[str, Any], exc: McpError) -> McpError:
    """2025-11-25 has its own code for a missing resource (-32002; 2026-07-28 uses -32602)."""
    if (msg.get("method") == "resources/read" and exc.code == INVALID_PARAMS
            and exc.message == "Resource not found"):
        return McpError(LEGACY_RESOURCE_NOT_FOUND, "Resource not found", exc.data)
    return exc


# -- result shapes ---------------------------------------------------------------------------


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


def close_stream(ctx: Context) -> None:
    """End this request's SSE stream now; the client resumes it with `Last-Event-ID`.

    2025-11-25 SSE polling: a long handler can free its connection and let the client poll for
    the rest (progress, server requests, the result), which the server replays on the client's
    GET. A no-op on the 2026-07-28 wire and on transports without streams (stdio, memory).
    """
    call = ctx._session
    if isinstance(call, LegacyCall):
        call.close_stream()


__all__ = ["LegacyDialect", "close_stream", "legacy_result", "legacy_tool"]
