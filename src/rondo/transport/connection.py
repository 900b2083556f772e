"""One client on an ordered message pipe (stdio's lines, an in-memory link), both eras.

The pipe transports are byte adapters over this: they decode a message and `feed` it here.
The connection routes it by era (`rondo.wire.era`), runs requests as tasks it tracks (so
`notifications/cancelled` and end of input can stop them, and a duplicate id is refused), opens
a legacy session on a handshake `initialize`, and writes what each request produces through the
`send` it was given (or a per-request `sink`). A new pipe-like transport is one small file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..server.inflight import InFlight
from ..server.legacy import LegacyDialect
from ..server.sessions import LegacyCall, LegacyConfig, LegacySession
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

    def feed(self, msg: dict[str, Any], sink: Send | None = None) -> asyncio.Task[Any] | None:
        """Take one decoded JSON object. A request becomes a running task (returned); what it
        produces goes to `sink`, by default the connection's `send`."""
        out = sink or self._send
        if pipe_era(msg, self.session is not None) == LEGACY:
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
            dialect = LegacyDialect(self.server, self.legacy_config)
            session, response = dialect.initialize(msg)
            out(response)
            if session is None:
                dialect.close_all()
                return None
            session.outlet = self._send
            self.dialect, self.session = dialect, session
            return None
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

    async def _answer_legacy(self, dialect: LegacyDialect, session: LegacySession,
                             msg: dict[str, Any], call: LegacyCall) -> None:
        response = await dialect.answer(session, msg, call, self.auth)
        if response is not None and not session.closed:
            call.send(response)

    # -- ending ----------------------------------------------------------------------------------

    async def drain(self) -> None:
        """End of input: questions to the client can no longer be answered, listen streams end,
        everything else finishes."""
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
        self.inflight.cancel_all()
        self._close_session()

    def _close_session(self) -> None:
        if self.dialect is not None:
            self.dialect.close_all()
