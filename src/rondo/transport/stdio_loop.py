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

from ..wire.bounds import may_be_deep, nesting_error, too_deep
from ..wire.errors import DECODE_ERRORS, INVALID_REQUEST, McpError, undecodable
from ..wire.jsonrpc import error_response, not_an_object, readable_id
from .connection import Connection
from .stdio import DEFAULT_MAX_IN_FLIGHT, OutputClosed, log_output_closed, write_all

if TYPE_CHECKING:
    from ..server.server import Server

log = logging.getLogger("rondo.stdio")

DEFAULT_MAX_MESSAGE = 4 * 1024 * 1024
_encode = msgspec.json.encode
_decode = msgspec.json.decode


class StdioSession:
    """stdio's byte adapter over a `Connection`: one JSON message per line, each way."""

    def __init__(
        self,
        server: Server,
        write: Callable[[bytes], None],
        *,
        auth: Any = None,
    ) -> None:
        self._write = write
        self.connection = Connection(server, self.send, auth=auth)
        self.output_closed = False

    def send(self, message: dict[str, Any]) -> None:
        if self.output_closed:
            return
        try:
            self._write(_encode(message) + b"\n")
        except OutputClosed:
            # Nobody reads our answers: stop everything once, quietly (serve() ends its loop).
            self.output_closed = True
            log_output_closed()
            self.connection.close()

    def feed(self, line: bytes) -> None:
        """Take one line from the client."""
        msg = self._decode(line)
        if msg is not None:
            self.connection.feed(msg)

    async def take(self, line: bytes, max_in_flight: int) -> None:
        """`feed`, but a request waits for one of `max_in_flight` slots first (the caller
        reads no further meanwhile). Responses and notifications never wait."""
        msg = self._decode(line)
        if msg is None:
            return
        if "id" in msg and "method" in msg:
            await self.connection.room(max_in_flight)
        if not self.output_closed:
            self.connection.feed(msg)

    def _decode(self, line: bytes) -> dict[str, Any] | None:
        if not line.strip():
            return None
        try:
            msg = _decode(line)
        except DECODE_ERRORS as exc:
            self.send(error_response(*undecodable(line, exc)))
            return None
        if not isinstance(msg, dict):
            self.send(error_response(None, not_an_object(msg)))
            return None
        if may_be_deep(line) and too_deep(msg):
            self.send(error_response(readable_id(msg), nesting_error()))
            return None
        return msg

    async def drain(self) -> None:
        """At end of input: finish what is running, end listen streams."""
        await self.connection.drain()


def _stdout_writer(out: BinaryIO) -> Callable[[bytes], None]:
    return functools.partial(write_all, out.fileno())


async def serve(
    server: Server,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    *,
    max_message: int = DEFAULT_MAX_MESSAGE,
    preread: bytes = b"",
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
) -> None:
    """Serve until end of input (or until the client closes stdout); `preread` is input
    already taken from stdin, served first. At most `max_in_flight` requests run at once."""
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
    while not session.output_closed:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            if exc.partial:
                await session.take(exc.partial, max_in_flight)
            break
        except asyncio.LimitOverrunError as exc:
            await _skip_line(reader, exc.consumed)
            session.send(
                error_response(None, McpError(INVALID_REQUEST, "Invalid Request: message too large"))
            )
            continue
        await session.take(line, max_in_flight)
    if session.output_closed:
        session.connection.close()
        return
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
