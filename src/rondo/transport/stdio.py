"""stdio transport: newline-delimited JSON-RPC on stdin/stdout; logs (and `print()`) go to stderr.

Hosts spawn stdio servers on demand, so start-up time counts. Most requests (lists, discover,
plain `def` handlers, every MRTR round of them) finish without awaiting anything, so `run`
answers them synchronously, without importing asyncio at all. The first message that needs
the event loop (an `async def` handler, `subscriptions/listen`, a cancellation, a legacy
`initialize`) hands the rest of the input over to `stdio_loop.serve`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import msgspec

from ..core.express import answer_tool
from ..wire.bounds import may_be_deep, nesting_error, too_deep
from ..wire.envelope import check_version, envelope
from ..wire.errors import DECODE_ERRORS, INVALID_REQUEST, McpError, undecodable
from ..wire.jsonrpc import error_response, not_an_object, readable_id, request_shape
from ..wire.logs import default_to_stderr, logger

if TYPE_CHECKING:
    from ..server.server import Server

DEFAULT_MAX_MESSAGE = 4 * 1024 * 1024
# Requests running at once (listen streams aside); beyond it no more input is read until one ends.
DEFAULT_MAX_IN_FLIGHT = 64
_CHUNK = 65536
_decode = msgspec.json.decode
_encode = msgspec.json.encode


class LineReader:
    """Blocking reads of newline-delimited messages from a file descriptor, bounded in size."""

    TOO_LARGE = object()

    def __init__(self, fd: int, max_message: int) -> None:
        self.fd = fd
        self.max_message = max_message
        # Lines are taken from `buffer` at `start` on: many lines read at once are not each
        # followed by a copy of all that is left.
        self.buffer = b""
        self.start = 0
        self.eof = False

    def next_line(self) -> bytes | object | None:
        """The next line (without its newline), TOO_LARGE, or None at end of input."""
        while True:
            buffer, start = self.buffer, self.start
            end = buffer.find(b"\n", start)
            if end != -1:
                self.start = end + 1
                return buffer[start:end] if end - start <= self.max_message else self.TOO_LARGE
            if len(buffer) - start > self.max_message:
                self._skip_rest()
                return self.TOO_LARGE
            chunk = os.read(self.fd, _CHUNK) if not self.eof else b""
            if not chunk:
                self.eof = True
                line = self.rest()
                self.buffer, self.start = b"", 0
                return line if line.strip() else None
            self.buffer, self.start = (buffer[start:] + chunk if start < len(buffer) else chunk), 0

    def rest(self) -> bytes:
        """What was read and not yet taken."""
        return self.buffer[self.start:] if self.start else self.buffer

    def _skip_rest(self) -> None:
        """Throw away an oversized line up to its newline, in bounded chunks."""
        self.buffer, self.start = b"", 0
        while True:
            chunk = os.read(self.fd, _CHUNK)
            if not chunk:
                self.eof = True
                return
            end = chunk.find(b"\n")
            if end != -1:
                self.buffer = chunk[end + 1 :]
                return


def answer_now(server: Server, line: bytes, send: Callable[[dict[str, Any]], None]) -> bool:
    """Answer `line` without an event loop if nothing in it can wait; False hands it over."""
    if not line.strip():
        return True
    core = server._core or server.core
    # `find`, not `in`: bytes' `in` first tries its operand as an integer, and raises, formats
    # and drops a TypeError on every line before it searches (about 1.5k instructions).
    deep = may_be_deep(line)
    if not deep and core.express and line.find(b'"tools/call"') != -1:
        response = (core.typed or core.typed_calls()).answer(line, send)
        if response is not None:
            send(response)
            return True
    try:
        msg = _decode(line)
    except DECODE_ERRORS as exc:
        send(error_response(*undecodable(line, exc)))
        return True
    if not isinstance(msg, dict):
        send(error_response(None, not_an_object(msg)))
        return True
    if deep and too_deep(msg):
        send(error_response(readable_id(msg), nesting_error()))
        return True
    method = msg.get("method")
    if method == "initialize" or "id" not in msg:
        return False  # a legacy session or a notification: the event loop's business
    try:
        rid, method, params, _ = request_shape(msg)
    except McpError as exc:
        send(error_response(readable_id(msg), exc))
        return True
    if method == "tools/call" and core.express:
        try:
            env = envelope(params)
            check_version(env)
        except McpError as exc:
            send(error_response(rid, exc))
            return True
        response = answer_tool(core, rid, params, env, send)
        if response is not None:
            send(response)
            return True
    if core.may_suspend(method, params):
        return False
    coro = core.handle_shaped(rid, method, params, emit=send)  # shape checked once, here
    try:
        coro.send(None)
    except StopIteration as done:
        if done.value is not None:
            send(done.value)
        return True
    coro.close()  # it wanted to wait after all: let the event loop run it from the start
    return False


class OutputClosed(BaseException):
    """The client closed its end of stdout: nobody reads our answers any more. A
    BaseException so that a handler's `except Exception` does not swallow it."""


def write_all(fd: int, data: bytes, write: Callable[[int, Any], int] = os.write) -> None:
    """Write every byte, whatever the pipe takes per call. A non-blocking stdout (stdin and
    stdout one socket, as socat or inetd give) is waited on until writable, not spun on."""
    view: bytes | memoryview = data  # a view only for a rest: most lines go in one write
    while view:
        try:
            n = write(fd, view)
        except BlockingIOError:
            _wait_writable(fd)
            continue
        except (BrokenPipeError, ConnectionResetError):
            raise OutputClosed from None
        view = memoryview(view)[n:] if n < len(view) else b""


def _wait_writable(fd: int) -> None:
    import select

    select.select((), (fd,), ())


def _writer(fd: int, write: Callable[[int, Any], int] = os.write) -> Callable[[dict[str, Any]], None]:
    def send(message: dict[str, Any]) -> None:
        write_all(fd, _encode(message) + b"\n", write)

    return send


@contextlib.contextmanager
def protocol_stdout() -> Iterator[int]:
    """While serving, stdout belongs to the protocol: yield a private descriptor for it and
    point file descriptor 1 and `sys.stdout` at stderr, so a `print()` in a handler (or a child
    process it starts) lands in the log instead of corrupting the message stream."""
    sys.stdout.flush()
    out_fd = os.dup(sys.stdout.fileno())
    saved_fd = os.dup(1)
    saved = sys.stdout
    os.dup2(sys.stderr.fileno(), 1)
    sys.stdout = sys.stderr
    try:
        yield out_fd
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        sys.stdout = saved
        os.dup2(saved_fd, 1)
        os.close(saved_fd)
        os.close(out_fd)


def run(server: Server, *, max_message: int = DEFAULT_MAX_MESSAGE,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT) -> None:
    """Serve until end of input (used by `Server.run_stdio()` and `rondo run`), or until the
    client closes stdout (one log line, exit 0). At most `max_in_flight` requests run at once.

    While it runs, `print()` and anything else written to stdout goes to stderr.
    """
    default_to_stderr()  # imports logging only once something logs
    if not isinstance(max_in_flight, int) or max_in_flight < 1:
        raise ValueError("max_in_flight must be a positive integer")
    # Ctrl-C in a terminal ends the server quietly, on the synchronous side too.
    with contextlib.suppress(KeyboardInterrupt), protocol_stdout() as out_fd:
        try:
            _serve(server, out_fd, max_message, max_in_flight)
        except OutputClosed:
            log_output_closed()


def log_output_closed() -> None:
    logger("rondo.stdio").warning("rondo: the client closed stdout; stopping")


def _serve(server: Server, out_fd: int, max_message: int, max_in_flight: int) -> None:
    send = _writer(out_fd)
    reader = LineReader(sys.stdin.fileno(), max_message)
    line: bytes | object | None = b""
    # Lifespan hooks open resources bound to the serving event loop: then all of it runs there.
    while not server._lifespan.hooks:
        line = reader.next_line()
        if line is None:
            return
        if line is LineReader.TOO_LARGE:
            send(error_response(None, McpError(INVALID_REQUEST, "Invalid Request: message too large")))
            continue
        assert isinstance(line, bytes)
        if not answer_now(server, line, send):
            break
    import asyncio

    from .stdio_loop import serve

    default_to_stderr()  # asyncio loaded logging: settle its configuration now

    preread = (line + b"\n" if isinstance(line, bytes) and line else b"") + reader.rest()
    out = os.fdopen(out_fd, "wb", buffering=0, closefd=False)

    async def serve_in_lifespan() -> None:
        async with server.started():
            await serve(server, stdout=out, max_message=max_message, preread=preread,
                        max_in_flight=max_in_flight)

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_in_lifespan())


def __getattr__(name: str) -> Any:
    # The asyncio side, for code that drives stdio from its own event loop.
    if name in ("serve", "StdioSession"):
        from . import stdio_loop

        return getattr(stdio_loop, name)
    raise AttributeError(name)
