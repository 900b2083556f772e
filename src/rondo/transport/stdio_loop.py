"""The asyncio side of the stdio transport: concurrent requests, cancellation, listen streams,
legacy sessions. `rondo.transport.stdio.run` answers what it can synchronously and hands over
to `serve` here at the first message that needs the event loop."""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, BinaryIO

import msgspec

from ..server.dispatch import error_response
from ..wire.errors import DECODE_ERRORS, INVALID_REQUEST, PARSE_ERROR, McpError
from .stdio import write_all

if TYPE_CHECKING:
    from ..server.server import Server

log = logging.getLogger("rondo.stdio")

DEFAULT_MAX_MESSAGE = 4 * 1024 * 1024
_encode = msgspec.json.encode
_decode = msgspec.json.decode


class StdioSession:
    """Reads messages, runs each request as its own task, writes one line per message."""

    def __init__(
        self,
        server: Server,
        write: Callable[[bytes], None],
        *,
        auth: Any = None,
    ) -> None:
        self.server = server
        self._write = write
        self.auth = auth
        self.inflight: dict[Any, asyncio.Task[Any]] = {}
        self.listeners: set[Any] = set()
        self._handle = server.core.handle
        self.legacy: Any = None  # a PipeSession once a handshake-era client sends initialize

    def send(self, message: dict[str, Any]) -> None:
        self._write(_encode(message) + b"\n")

    def feed(self, line: bytes) -> None:
        """Take one line from the client."""
        if not line.strip():
            return
        try:
            msg = _decode(line)
        except DECODE_ERRORS:
            self.send(error_response(None, McpError(PARSE_ERROR, "Parse error: invalid JSON")))
            return
        if not isinstance(msg, dict):
            self.send(error_response(None, McpError(INVALID_REQUEST, "Invalid Request: expected a JSON object")))
            return
        if (self.legacy is not None or msg.get("method") == "initialize") and self._legacy(msg):
            return
        if "id" not in msg:
            self._notification(msg)
            return
        rid = msg["id"]
        if isinstance(rid, str | int) and not isinstance(rid, bool) and rid in self.inflight:
            self.send(error_response(None, McpError(INVALID_REQUEST, f"Duplicate request id {rid!r}")))
            return
        task = asyncio.ensure_future(self._run(msg))
        if isinstance(rid, str | int) and not isinstance(rid, bool):
            self.inflight[rid] = task
            if msg.get("method") == "subscriptions/listen":
                self.listeners.add(rid)
            task.add_done_callback(functools.partial(self._forget, rid))

    def _legacy(self, msg: dict[str, Any]) -> bool:
        """Serve handshake-era messages: `initialize` opens the session, later ones use it.

        Messages carrying modern `_meta` stay on the 2026-07-28 path either way.
        """
        from ..server.legacy import PipeSession, has_modern_meta, is_legacy_start

        if self.legacy is None:
            if not is_legacy_start(msg):
                return False
            legacy = PipeSession(self.server, self.send, auth=self.auth)
            self.send(legacy.start(msg))
            if legacy.session is not None:
                self.legacy = legacy
            else:
                legacy.close()
            return True
        if has_modern_meta(msg):
            return False
        self.legacy.feed(msg)
        return True

    def _forget(self, rid: Any, _task: asyncio.Task[Any]) -> None:
        self.inflight.pop(rid, None)
        self.listeners.discard(rid)

    def _notification(self, msg: dict[str, Any]) -> None:
        if msg.get("method") == "notifications/cancelled":
            params = msg.get("params")
            rid = params.get("requestId") if isinstance(params, dict) else None
            task = self.inflight.get(rid) if isinstance(rid, str | int) else None
            if task is not None:
                task.cancel()

    async def _run(self, msg: dict[str, Any]) -> None:
        try:
            response = await self._handle(msg, emit=self.send, auth=self.auth)
        except asyncio.CancelledError:
            return  # cancelled by the client: nothing more is sent for this request
        if response is not None:
            self.send(response)

    async def drain(self) -> None:
        """At end of input: finish what is running, end listen streams."""
        if self.legacy is not None:
            await self.legacy.drain()
        for rid in list(self.listeners):
            task = self.inflight.get(rid)
            if task is not None:
                task.cancel()
        pending = [t for t in self.inflight.values() if not t.done()]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)


def _stdout_writer(out: BinaryIO) -> Callable[[bytes], None]:
    return functools.partial(write_all, out.fileno())


async def serve(
    server: Server,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    *,
    max_message: int = DEFAULT_MAX_MESSAGE,
    preread: bytes = b"",
) -> None:
    """Serve until end of input; `preread` is input already taken from stdin, served first."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    session = StdioSession(server, _stdout_writer(stdout))
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=max_message)
    if preread:
        reader.feed_data(preread)
    try:
        if not _pollable(stdin):
            raise ValueError("stdin cannot be polled")
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    except (ValueError, OSError):
        # Not a pollable pipe (a regular file, /dev/null): read it in a thread instead.
        await _feed_from_thread(stdin, reader, loop)
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            if exc.partial:
                session.feed(exc.partial)
            break
        except asyncio.LimitOverrunError as exc:
            await _skip_line(reader, exc.consumed)
            session.send(
                error_response(None, McpError(INVALID_REQUEST, "Invalid Request: message too large"))
            )
            continue
        session.feed(line)
    await session.drain()


def _pollable(stdin: BinaryIO) -> bool:
    """Can the event loop watch this file? epoll refuses some character devices (/dev/null)
    only when the loop registers them, after `connect_read_pipe` has returned, which would
    leave the server waiting forever for input that never comes."""
    import selectors

    try:
        with selectors.DefaultSelector() as selector:
            selector.register(stdin.fileno(), selectors.EVENT_READ)
    except (OSError, ValueError):
        return False
    return True


async def _skip_line(reader: asyncio.StreamReader, consumed: int) -> None:
    """Throw away the rest of an oversized line, in bounded chunks."""
    while True:
        try:
            await reader.readuntil(b"\n")
            return
        except asyncio.LimitOverrunError as exc:
            await reader.readexactly(exc.consumed)
        except asyncio.IncompleteReadError:
            return


async def _feed_from_thread(
    stdin: BinaryIO, reader: asyncio.StreamReader, loop: asyncio.AbstractEventLoop
) -> None:
    def pump() -> None:
        while True:
            chunk = stdin.read1(65536) if hasattr(stdin, "read1") else stdin.read(65536)
            if not chunk:
                loop.call_soon_threadsafe(reader.feed_eof)
                return
            loop.call_soon_threadsafe(reader.feed_data, chunk)

    loop.run_in_executor(None, pump)
