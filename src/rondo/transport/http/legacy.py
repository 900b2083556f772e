"""Streamable HTTP for handshake-era (2025-11-25 and older) sessions, beside the 2026-07-28 wire.

`HttpApp` routes here what its era check calls legacy: POSTs carrying `Mcp-Session-Id` or an
`initialize` without modern `_meta`, and every GET and DELETE.

- POST `initialize` opens a session and answers with its `Mcp-Session-Id`.
- POST request: answered with one JSON body, or, once the handler emits something (progress, a
  log line, a server-to-client request), with an SSE stream ending in the response. Every event
  has an id `<stream>_<seq>`; clients on 2025-11-25 first get a priming event (id, empty data,
  `retry`) so they can resume the stream with `Last-Event-ID` if it breaks or the server ends it
  early (`rondo.legacy.close_stream`, SSE polling).
- POST of a notification or of a response to one of our requests: 202.
- GET: the session's standalone stream (list changes, resource updates), or, with
  `Last-Event-ID`, the replay and continuation of the stream that id belongs to.
- DELETE: ends the session.

A dropped connection does not cancel the request (2025-11-25: only `notifications/cancelled`
does); what it would have received waits in a bounded replay buffer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from typing import TYPE_CHECKING, Any

from ...legacy.dialect import LegacyDialect
from ...legacy.sessions import LegacyCall, LegacyConfig, LegacySession
from ...wire.era import is_legacy_start
from ...wire.errors import INVALID_REQUEST, SERVER_BUSY, SESSION_NOT_FOUND, McpError
from ...wire.jsonrpc import duplicate_id, error_response, is_response, readable_id
from ...wire.meta import LEGACY_VERSIONS
from .asgi import (
    KEEPALIVE_FRAME,
    Headers,
    Receive,
    Send,
    header_value,
    send_error,
    send_json,
    send_plain,
    sse_frame,
    start_stream,
)

if TYPE_CHECKING:
    from .app import HttpApp

log = logging.getLogger("rondo.http.legacy")
REPLAY_LIMIT = 256  # events kept per request stream for Last-Event-ID replay
STANDALONE_REPLAY = 64  # events kept on the standalone GET stream
DETACHED_LIMIT = 16  # unfinished request streams a session keeps after their connection dropped
POLLING_VERSION = "2025-11-25"  # priming events and retry hints start here


class ReplayBudget:
    """Bytes of replayable events kept, per session and over every session of one endpoint."""

    __slots__ = ("per_session", "total", "used")

    def __init__(self, per_session: int, total: int) -> None:
        self.per_session = per_session
        self.total = total
        self.used = 0


class Stream:
    """One SSE stream of a session: its numbered events, and the connection writing them, if any."""

    __slots__ = ("number", "seq", "events", "conn", "final", "limit", "state")

    def __init__(self, number: int, limit: int, state: HttpState | None = None) -> None:
        self.number = number
        self.seq = 0
        self.events: deque[tuple[int, bytes]] = deque()
        self.limit = limit
        self.conn: Conn | None = None
        self.final = False
        self.state = state

    def event_id(self, seq: int) -> str:
        return f"{self.number}_{seq}"

    def push(self, msg: dict[str, Any]) -> None:
        self.seq += 1
        frame = sse_frame(msg, self.event_id(self.seq))
        events = self.events
        if len(events) >= self.limit:
            self._release(len(events.popleft()[1]))
        events.append((self.seq, frame))
        state = self.state
        if state is not None:
            if len(events) == 1:
                state.holding[self] = None
            state.charge(len(frame), self)
        if self.conn is not None:
            self.conn.poke()

    def finish(self) -> None:
        self.final = True
        if self.conn is not None:
            self.conn.poke()

    def after(self, seq: int) -> list[bytes]:
        return [frame for s, frame in self.events if s > seq]

    def release_all(self) -> None:
        self._release(sum(len(frame) for _, frame in self.events))
        self.events.clear()
        if self.state is not None:
            self.state.holding.pop(self, None)

    def _release(self, size: int) -> None:
        if self.state is not None:
            self.state.release(size)


class Conn:
    """An HTTP response currently writing a stream."""

    __slots__ = ("sent", "wake", "detach", "gone")

    def __init__(self, sent: int) -> None:
        self.sent = sent
        self.wake: asyncio.Future[None] | None = None
        self.detach = False  # end the response early (polling, replaced, session over)
        self.gone = False  # the client went away

    def poke(self) -> None:
        wake = self.wake
        if wake is not None and not wake.done():
            wake.set_result(None)


class HttpState:
    """Per-session HTTP state: its streams and how many connections are live."""

    __slots__ = ("streams", "next_stream", "standalone", "live", "closed", "budget", "used", "gets",
                 "holding")

    def __init__(self, budget: ReplayBudget | None = None) -> None:
        self.streams: dict[int, Stream] = {}
        self.next_stream = 0
        self.standalone: Stream | None = None
        self.live = 0
        self.closed = False
        self.budget = budget or ReplayBudget(256 * 1024, 64 * 1024 * 1024)
        self.used = 0  # bytes of replayable events this session keeps
        self.gets = 0  # GET streams open
        # Streams that hold events charged here, oldest first (a dict as an ordered set). The
        # budget drops from these alone: scanning every stream on every push made a flood of
        # small notifications quadratic.
        self.holding: dict[Stream, None] = {}

    def open_stream(self, limit: int = REPLAY_LIMIT) -> Stream:
        self.next_stream += 1
        stream = Stream(self.next_stream, limit, self)
        self.streams[stream.number] = stream
        if len(self.streams) > DETACHED_LIMIT * 4:
            self._trim()
        return stream

    def _trim(self) -> None:
        """Forget the oldest request streams nobody is reading (their clients never came back)."""
        detached = [s for s in self.streams.values() if s.conn is None and s is not self.standalone]
        for stream in detached[: max(0, len(detached) - DETACHED_LIMIT)]:
            self.forget(stream)

    def forget(self, stream: Stream) -> None:
        if self.streams.get(stream.number) is stream:
            del self.streams[stream.number]
        stream.release_all()

    def charge(self, size: int, current: Stream) -> None:
        """Count a new event; over the session's or the endpoint's budget, drop the oldest
        events, from streams nobody reads first, never the event just added. Called for every
        event a session emits, so the loop stays inline."""
        budget = self.budget
        self.used += size
        budget.used += size
        holding = self.holding
        while self.used > budget.per_session or budget.used > budget.total:
            victim = self._victim(current)
            if victim is None:
                return
            events = victim.events
            dropped = len(events.popleft()[1])
            self.used -= dropped
            budget.used -= dropped
            if not events:
                del holding[victim]

    def release(self, size: int) -> None:
        self.used -= size
        self.budget.used -= size

    def _victim(self, current: Stream) -> Stream | None:
        """The stream whose oldest event goes next: one nobody reads, then any other, then the
        current one down to its newest event. Every stream in `holding` has an event, so only
        streams with a reader (a few per session) are walked past."""
        for stream in self.holding:
            if stream.conn is None and stream is not current:
                return stream
        for stream in self.holding:
            if stream is not current:
                return stream
        return current if len(current.events) > 1 else None

    def notify(self, msg: dict[str, Any]) -> None:
        if self.standalone is not None:
            self.standalone.push(msg)

    def close(self, _session: LegacySession) -> None:
        self.closed = True
        for stream in self.streams.values():
            if stream.conn is not None:
                stream.conn.detach = True
                stream.conn.poke()
        for stream in tuple(self.streams.values()):
            self.forget(stream)


class _Exchange:
    """One POST request's answer while the handler runs: JSON until it emits, then a stream."""

    __slots__ = ("stream", "wake", "detach", "done")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.stream: Stream | None = None
        self.wake: asyncio.Future[None] = loop.create_future()
        self.detach = False
        self.done = False

    def poke(self) -> None:
        if not self.wake.done():
            self.wake.set_result(None)


class LegacyHttp:
    """The legacy half of one `HttpApp` endpoint."""

    def __init__(self, app: HttpApp, config: LegacyConfig | None = None) -> None:
        self.app = app
        self.dialect = LegacyDialect(app.server, config)
        self.config = self.dialect.config
        self.keepalive = app.keepalive
        self.budget = ReplayBudget(self.config.max_replay_bytes, self.config.max_replay_total)

    @property
    def sessions(self) -> Any:
        return self.dialect.sessions

    async def shutdown(self) -> None:
        self.dialect.close_all()

    async def handle_http(self, scope: dict[str, Any], receive: Receive, send: Send,
                          headers: Headers, msg: dict[str, Any] | None) -> None:
        method = scope["method"]
        sid = header_value(headers, b"mcp-session-id")
        if method == "POST" and msg is not None:
            if sid is None:
                await self._sessionless(msg, scope, send)
                return
        elif sid is None:
            await send_error(send, None, McpError(SERVER_BUSY, "Bad Request: Mcp-Session-Id header is required"), 400)
            return
        session = self.dialect.sessions.get(sid)
        guard = self.app.guard
        if session is not None and guard is not None and not guard.session_ok(session, scope.get("auth")):
            session = None  # rondo.auth hook: another principal's session is, to this one, unknown
        if session is None or session.transport is None:
            await send_error(send, readable_id(msg), McpError(SESSION_NOT_FOUND, "Session not found"), 404)
            return
        version = header_value(headers, b"mcp-protocol-version")
        if version is not None and version not in LEGACY_VERSIONS:
            await send_error(send, None, status=400, exc=McpError(
                INVALID_REQUEST, f"Bad Request: unsupported MCP-Protocol-Version {version!r} for this session"))
            return
        if method == "DELETE":
            self.dialect.end(session)
            await send_plain(send, 200)
        elif method == "GET":
            await self._get(session, headers, receive, send)
        else:
            assert msg is not None
            await self._post(session, msg, scope, receive, send)

    # -- POST --------------------------------------------------------------------------------

    async def _sessionless(self, msg: dict[str, Any], scope: dict[str, Any], send: Send) -> None:
        if not is_legacy_start(msg):
            await send_error(send, readable_id(msg), McpError(
                SERVER_BUSY, "Bad Request: Mcp-Session-Id header is required (send initialize first)"), 400)
            return
        guard = self.app.guard
        if guard is not None:  # rondo.auth hook: server-wide scopes hold for initialize too
            needed = guard.insufficient("initialize", {}, scope.get("auth"))
            if needed:
                await guard.forbid(send, readable_id(msg), needed)
                return
        session, response = await self.dialect.open(msg, scope.get("auth"), scope.get("headers"))
        if session is None:
            code = response["error"]["code"]
            await send_json(send, 503 if code == SERVER_BUSY else 400, response)
            return
        if guard is not None:
            guard.bind_session(session, scope.get("auth"))  # rondo.auth hook
        state = HttpState(self.budget)
        session.transport = state
        session.outlet = state.notify
        session.on_close = state.close
        await send_json(send, 200, response, [(b"mcp-session-id", session.id.encode())])

    async def _post(self, session: LegacySession, msg: dict[str, Any], scope: dict[str, Any],
                    receive: Receive, send: Send) -> None:
        if "method" not in msg:
            if is_response(msg):
                session.deliver(msg)
                await send_plain(send, 202)
                return
            await send_error(send, None, McpError(INVALID_REQUEST, "Invalid Request: method must be a string"), 400)
            return
        if "id" not in msg:
            self.dialect.notification(session, msg)
            await send_plain(send, 202)
            return
        if msg["id"] in session.inflight:
            await send_error(send, None, duplicate_id(msg["id"]), 400)
            return
        guard = self.app.guard
        if guard is not None:  # rondo.auth hook: the 403 step-up challenge
            params = msg.get("params")
            needed = guard.insufficient(msg.get("method"), params if isinstance(params, dict) else {},
                                        scope.get("auth"))
            if needed:
                await guard.forbid(send, msg["id"], needed)
                return
        await self._request(session, msg, scope, receive, send)

    async def _request(self, session: LegacySession, msg: dict[str, Any], scope: dict[str, Any],
                       receive: Receive, send: Send) -> None:
        loop = asyncio.get_running_loop()
        state: HttpState = session.transport
        box = _Exchange(loop)

        def ensure_stream() -> Stream:
            if box.stream is None:
                box.stream = state.open_stream()
            return box.stream

        def push(note: dict[str, Any]) -> None:
            if box.done or state.closed:
                return
            ensure_stream().push(note)
            box.poke()

        def closer() -> None:
            if box.done or state.closed:
                return
            stream = ensure_stream()
            box.detach = True
            if stream.conn is not None:
                stream.conn.detach = True
                stream.conn.poke()
            box.poke()

        call = LegacyCall(session, push, closer)
        task = loop.create_task(self.dialect.answer(session, msg, call, scope.get("auth"),
                                                    scope.get("headers", ())))
        session.inflight.track(msg["id"], task)

        def finished(t: asyncio.Task[Any]) -> None:
            stream = box.stream
            if stream is not None and not state.closed:
                response = None if t.cancelled() else t.result()
                if response is not None:
                    stream.push(response)
                stream.finish()
            box.done = True
            box.poke()

        task.add_done_callback(finished)
        await box.wake
        stream = box.stream
        if stream is None:
            if not task.done():  # the session ended under us
                await send_error(send, None, McpError(SESSION_NOT_FOUND, "Session not found"), 404)
                return
            response = None if task.cancelled() else task.result()
            if response is None:
                response = error_response(msg.get("id"), McpError(-32603, "Request cancelled"))
            await send_json(send, 200, response)
            return
        first = b""
        if session.version >= POLLING_VERSION:
            first = _priming(stream, 0, self.config.retry_ms)
        await self._pump(state, stream, Conn(0), receive, send, first, detach=box.detach)

    # -- GET ---------------------------------------------------------------------------------

    async def _get(self, session: LegacySession, headers: Headers, receive: Receive, send: Send) -> None:
        accept = header_value(headers, b"accept")
        if accept is not None and "text/event-stream" not in accept and "*/*" not in accept:
            await send_error(send, None, status=406, exc=McpError(INVALID_REQUEST, "Not Acceptable: GET needs Accept: text/event-stream"))
            return
        state: HttpState = session.transport
        if state.gets >= self.config.max_get_streams:
            await send_error(send, None, status=409, exc=McpError(
                INVALID_REQUEST, f"Conflict: this session already has {state.gets} GET streams open"))
            return
        last = header_value(headers, b"last-event-id")
        stream, sent = (None, 0)
        if last is not None:
            stream, sent = _resume_point(state, last)
        first = b""
        if stream is None:
            stream = state.standalone
            if stream is None:
                stream = state.standalone = state.open_stream(STANDALONE_REPLAY)
            sent = stream.seq
            if session.version >= POLLING_VERSION:
                first = _priming(stream, stream.seq, self.config.retry_ms)
        state.gets += 1
        try:
            await self._pump(state, stream, Conn(sent), receive, send, first)
        finally:
            state.gets -= 1

    # -- writing a stream ----------------------------------------------------------------------

    async def _pump(self, state: HttpState, stream: Stream, conn: Conn, receive: Receive, send: Send,
                    first: bytes, *, detach: bool = False) -> None:
        """Write `stream` to this response from `conn.sent` on, until it ends or we let go."""
        old = stream.conn
        if old is not None:  # a newer connection takes the stream over
            old.detach = True
            old.poke()
        stream.conn = conn
        conn.detach = detach
        loop = asyncio.get_running_loop()
        watcher = loop.create_task(_watch(receive, conn))
        state.live += 1
        try:
            await start_stream(send)
            if first:
                await send({"type": "http.response.body", "body": first, "more_body": True})
            while True:
                if conn.gone:
                    return
                frames = stream.after(conn.sent)
                if frames:
                    conn.sent = stream.seq
                    await send({"type": "http.response.body", "body": b"".join(frames), "more_body": True})
                if stream.final and conn.sent >= stream.seq:
                    state.forget(stream)  # delivered: nothing left to replay
                    break
                if conn.detach or state.closed or stream.conn is not conn:
                    break
                conn.wake = loop.create_future()
                try:
                    await asyncio.wait_for(asyncio.shield(conn.wake), self.keepalive)
                except TimeoutError:
                    await send({"type": "http.response.body", "body": KEEPALIVE_FRAME, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            conn.gone = True
        finally:
            state.live -= 1
            watcher.cancel()
            if stream.conn is conn:
                stream.conn = None


async def _watch(receive: Receive, conn: Conn) -> None:
    with contextlib.suppress(Exception):
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                conn.gone = True
                conn.poke()
                return


def _resume_point(state: HttpState, last: str) -> tuple[Stream | None, int]:
    number, _, seq = last.partition("_")
    try:
        stream = state.streams.get(int(number))
        position = int(seq)
    except ValueError:
        return None, 0
    if stream is None or position < 0 or position > stream.seq:
        return None, 0
    return stream, position


def _priming(stream: Stream, seq: int, retry_ms: int) -> bytes:
    return b"id: " + stream.event_id(seq).encode() + b"\nretry: " + str(retry_ms).encode() + b"\ndata: \n\n"


__all__ = ["LegacyHttp", "HttpState", "Stream"]
