"""One client on an ordered message pipe (stdio's lines, an in-memory link), both eras.

The pipe transports are byte adapters over this: they decode a message and `feed` it here.
The connection routes it by era (`rondo.wire.era`), runs requests as tasks it tracks (so
`notifications/cancelled` and end of input can stop them, and a duplicate id is refused), opens
a legacy session on a handshake `initialize`, and writes what each request produces through the
`send` it was given (or a per-request `sink`). A new pipe-like transport is one small file.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.inflight import InFlight
from ..legacy.dialect import LegacyDialect
from ..legacy.sessions import LegacyCall, LegacyConfig, LegacySession
from ..wire.era import LEGACY, pipe_era
from ..wire.errors import INVALID_REQUEST, McpError
from ..wire.jsonrpc import duplicate_id, error_response, is_response, readable_id, valid_id

if TYPE_CHECKING:
    from ..server.server import Server

Send = Callable[[dict[str, Any]], None]


class Connection:
    """Serves one client over a pipe: `feed` decoded messages; `drain` at end of input."""

    def __init__(
        self,
        server: Server,
        send: Send,
        *,
        auth: Any = None,
        legacy: LegacyConfig | None = None,
    ) -> None:
        self.server = server
        self.core = server.core
        self._send = send
        self.auth = auth
        self.legacy_config = legacy
        self.inflight = InFlight()
        self.listeners: set[Any] = set()
        self.dialect: LegacyDialect | None = None
        self.session: LegacySession | None = None
        self._opening: asyncio.Future[None] | None = None  # an `initialize` in the middleware

    def feed(self, msg: dict[str, Any], sink: Send | None = None) -> asyncio.Task[Any] | None:
        """Take one decoded JSON object. A request becomes a running task (returned); what it
        produces goes to `sink`, by default the connection's `send`."""
        out = sink or self._send
        if pipe_era(msg, self.session is not None or self._opening is not None) == LEGACY:
            return self._legacy(msg, out)
        if "id" not in msg:
            if msg.get("method") == "notifications/cancelled":
                self.inflight.cancel_from(msg.get("params"))
            return None
        rid = msg["id"]
        if rid in self.inflight:
            out(error_response(None, duplicate_id(rid)))
            return None
        task = self.inflight.start(rid, self._answer(msg, out))
        if msg.get("method") == "subscriptions/listen" and valid_id(rid):
            self.listeners.add(rid)
            task.add_done_callback(lambda _t: self.listeners.discard(rid))
        return task

    async def _answer(self, msg: dict[str, Any], out: Send) -> None:
        try:
            response = await self.core.handle(msg, emit=out, auth=self.auth)
        except asyncio.CancelledError:
            return  # cancelled by the client: nothing more is sent for this request
        if response is not None:
            out(response)

    # -- the handshake era ---------------------------------------------------------------------

    def _legacy(self, msg: dict[str, Any], out: Send) -> asyncio.Task[Any] | None:
        session = self.session
        if session is None:  # a handshake `initialize` opens the pipe's one session
            opening = self._opening
            if opening is not None:  # middleware is still deciding on it: keep the order
                return asyncio.ensure_future(self._after_open(opening, msg, out))
            dialect = LegacyDialect(self.server, self.legacy_config)
            if not self.core.middleware:
                self._opened(dialect, *dialect.initialize(msg), out)
                return None
            # The handshake runs through the server's middleware like any request (a rate
            # limiter, a request log), so it waits on it; what arrives meanwhile waits too.
            task = asyncio.ensure_future(self._open(dialect, msg, out))
            self._opening = task
            return task
        if "method" not in msg:
            if is_response(msg):
                session.deliver(msg)  # the client's answer to one of our questions
            return None
        legacy = self.dialect
        assert legacy is not None
        if "id" not in msg:
            legacy.notification(session, msg)
            return None
        rid = msg["id"]
        if msg.get("method") == "initialize":
            out(error_response(readable_id(msg), McpError(
                INVALID_REQUEST, "Invalid Request: the session is already initialized")))
            return None
        if rid in session.inflight:
            out(error_response(None, duplicate_id(rid)))
            return None
        call = LegacyCall(session, out)
        return session.inflight.start(rid, self._answer_legacy(legacy, session, msg, call))

    def _opened(self, dialect: LegacyDialect, session: LegacySession | None,
                response: dict[str, Any], out: Send) -> None:
        out(response)
        if session is None:
            dialect.close_all()
            return
        session.outlet = self._send
        self.dialect, self.session = dialect, session

    async def _open(self, dialect: LegacyDialect, msg: dict[str, Any], out: Send) -> None:
        try:
            session, response = await dialect.open(msg, self.auth)
        except asyncio.CancelledError:
            dialect.close_all()
            raise
        finally:
            self._opening = None
        self._opened(dialect, session, response, out)

    async def _after_open(self, opening: asyncio.Future[None], msg: dict[str, Any],
                          out: Send) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(opening)
        task = self.feed(msg, out)  # a second `initialize` is refused there, as always
        if task is not None:
            await task

    async def _answer_legacy(self, dialect: LegacyDialect, session: LegacySession,
                             msg: dict[str, Any], call: LegacyCall) -> None:
        response = await dialect.answer(session, msg, call, self.auth)
        if response is not None and not session.closed:
            call.send(response)

    # -- bounds ----------------------------------------------------------------------------------

    def running(self) -> list[asyncio.Task[Any]]:
        """Requests still running, both eras, listen streams aside (those are capped apart)."""
        listening = {self.inflight.get(rid) for rid in self.listeners}
        tasks = [t for t in self.inflight if t not in listening]
        if self.session is not None:
            tasks.extend(self.session.inflight)
        return [t for t in tasks if not t.done()]

    async def room(self, cap: int) -> None:
        """Wait until fewer than `cap` requests run."""
        while True:
            running = self.running()
            if len(running) < cap:
                return
            await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)

    # -- ending ----------------------------------------------------------------------------------

    async def drain(self) -> None:
        """End of input: questions to the client can no longer be answered, listen streams end,
        everything else finishes."""
        if self._opening is not None:  # the handshake still in the middleware: let it finish
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self._opening)
        session = self.session
        if session is not None:
            if session.pending:
                for fut in session.pending.values():
                    fut.cancel()
            await session.inflight.wait()
        for rid in tuple(self.listeners):
            task = self.inflight.get(rid)
            if task is not None:
                task.cancel()
        await self.inflight.wait()
        self._close_session()

    def close(self) -> None:
        """The client is gone: cancel everything that runs or waits on it."""
        if self._opening is not None:
            self._opening.cancel()
        self.inflight.cancel_all()
        self._close_session()

    def _close_session(self) -> None:
        if self.dialect is not None:
            self.dialect.close_all()
