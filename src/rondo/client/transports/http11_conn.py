"""One keep-alive HTTP/1.1 connection of `Http11Pool`, as an `asyncio.Protocol`, and the parser
of a response's head and of how its body is framed.

The connection keeps what it received in one buffer and wakes at most one reader when bytes
(or the end) arrive; `readuntil`, `readexactly` and `read` take from the buffer without a wait
when it already holds what they need. Reading is paused while more than `HIGH` bytes wait
unread (a slow consumer of a long answer) and resumed when a reader needs more; writing waits
while the transport says its buffer is full. Compared with asyncio's StreamReader/StreamWriter
pair this is one object, no per-read callbacks and no wait at all when a whole answer arrived
in one piece, which on a proxy's upstream link is nearly every time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx

MAX_HEAD = 64 * 1024  # a response's status line and headers, at most
HIGH = 256 * 1024  # unread bytes held before reading pauses
_WS = " \t\n\r\x0b\x0c"  # what bytes.strip() strips: ASCII whitespace only
_get: Callable[..., Any] = dict.get


class LeanHeaders(dict[str, str]):
    """A response's headers: lower-cased names, latin-1 values, repeated ones joined."""

    __slots__ = ()

    def get(self, key: str, default: Any = None) -> Any:
        return dict.get(self, key.lower(), default)

    def __getitem__(self, key: str) -> str:
        return dict.__getitem__(self, key.lower())

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key.lower() if isinstance(key, str) else key)


def parse_head(raw: bytes) -> tuple[int, LeanHeaders, bytes]:
    """The status, headers and version of a response head (`raw` without its final empty
    line); `httpx.RemoteProtocolError` if it is malformed."""
    end = raw.find(b"\r\n")
    first = raw if end < 0 else raw[:end]
    parts = first.split(b" ", 2)
    # The status: exactly three ASCII digits, 100 to 599 (RFC 9110 section 15); "0", "0200",
    # "600" or "99999" is a protocol error (the caller drops the connection), never a status.
    if (len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or len(parts[1]) != 3
            or not parts[1].isdigit() or not b"100" <= parts[1] <= b"599"):
        raise httpx.RemoteProtocolError(f"malformed status line {first[:80]!r}")
    headers = LeanHeaders()
    if end >= 0:
        had = _get  # the dict's own get: the names are lower-cased here already
        for line in raw[end + 2:].decode("latin-1").split("\r\n"):
            name, sep, value = line.partition(":")
            if not sep or not name or name != name.strip(_WS):
                raise httpx.RemoteProtocolError(f"malformed header line {line[:80].encode('latin-1')!r}")
            key, value = name.lower(), value.strip(_WS)
            before = had(headers, key)
            headers[key] = value if before is None else f"{before}, {value}"
    return int(parts[1]), headers, parts[0]


def reusable_after(headers: LeanHeaders, version: bytes) -> bool:
    """May the connection carry another request after this answer?"""
    return version == b"HTTP/1.1" and "close" not in _get(headers, "connection", "").lower()


def body_framing(status: int, headers: LeanHeaders, version: bytes) -> tuple[bool, int | None, bool]:
    """How a (non-HEAD) answer's body is framed: (the connection reusable after it, its
    length if known, chunked). Header names are lower-cased already."""
    reusable = reusable_after(headers, version)
    if status in (204, 304):
        return reusable, 0, False
    if "chunked" in _get(headers, "transfer-encoding", "").lower():
        return reusable, None, True
    length = _get(headers, "content-length", "").strip(" \t")
    if length.isascii() and length.isdigit():
        return reusable, int(length), False
    return False, None, False  # delimited by the connection's end


class Conn(asyncio.Protocol):
    """See the module docstring. Errors a read raises: `asyncio.IncompleteReadError` at the
    connection's end, `asyncio.LimitOverrunError` past a `readuntil` limit, or the OSError the
    connection was lost with."""

    def __init__(self) -> None:
        self.transport: Any = None  # an asyncio.Transport (uvloop's is not a subclass)
        self.buf = bytearray()
        self.eof = False
        self.error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._paused = False  # reading
        self._blocked: asyncio.Future[None] | None = None  # writing, while the transport is full
        self._full = False

    # -- asyncio.Protocol ------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)
        if len(buf) > HIGH and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()

    def eof_received(self) -> bool | None:
        self.eof = True
        self._wake()
        return None  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        if exc is not None and self.error is None:
            self.error = exc
        self._wake()
        blocked, self._blocked = self._blocked, None
        if blocked is not None and not blocked.done():
            blocked.set_result(None)

    def pause_writing(self) -> None:
        self._full = True

    def resume_writing(self) -> None:
        self._full = False
        blocked, self._blocked = self._blocked, None
        if blocked is not None and not blocked.done():
            blocked.set_result(None)

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- the pool's side ---------------------------------------------------------------------------

    def usable(self) -> bool:
        transport = self.transport
        return (transport is not None and not transport.is_closing() and not self.eof
                and not self.buf)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def put(self, data: bytes) -> bool:
        """Write `data` without waiting; True when the writer must `drain()` before going on
        (the transport's buffer is full, or the connection failed)."""
        transport = self.transport
        if transport is None or transport.is_closing():
            raise ConnectionResetError("the connection is closed")
        transport.write(data)
        return self._full or self.error is not None

    async def drain(self) -> None:
        """Wait while the transport's buffer is full; the connection's error, if it failed."""
        while self._full and not self.eof:
            self._blocked = asyncio.get_running_loop().create_future()
            await self._blocked
        if self.error is not None:
            raise self.error

    async def _more(self) -> None:
        """Wait until bytes arrive or the connection ends (`arrival`, awaited here)."""
        waiter = self.arrival()
        try:
            await waiter
        finally:
            self._waiter = None

    def until(self, sep: bytes, limit: int) -> bytes | None:
        """`readuntil` without a wait: the bytes up to and including `sep` if the buffer holds
        them (taken), else None (then await `arrival()` and ask again)."""
        buf = self.buf
        at = buf.find(sep)
        if at >= 0:
            end = at + len(sep)
            if end > limit:
                raise asyncio.LimitOverrunError("separator found past the limit", at)
            data = bytes(buf[:end])
            del buf[:end]
            return data
        if len(buf) > limit:
            raise asyncio.LimitOverrunError("separator not found within the limit", len(buf))
        return None

    def arrival(self) -> asyncio.Future[None]:
        """A future done when more bytes (or the end) arrive: `_more` for a caller that awaits
        it itself (no coroutine of its own); raises at the end, resumes a paused read."""
        if self.eof:
            if self.error is not None:
                raise self.error
            raise asyncio.IncompleteReadError(bytes(self.buf), None)
        if self._paused and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        return waiter  # data_received (or the end) clears `_waiter` as it wakes it

    async def readuntil(self, sep: bytes, limit: int) -> bytes:
        """The bytes up to and including `sep`, which must come within `limit` bytes."""
        while True:
            data = self.until(sep, limit)
            if data is not None:
                return data
            await self.arrival()

    async def readexactly(self, n: int) -> bytes:
        buf = self.buf
        while len(buf) < n:
            await self._more()
        data = bytes(buf[:n])
        del buf[:n]
        return data

    def take(self, n: int) -> bytes | None:
        """`n` bytes if the buffer holds them (taken), else None: `readexactly` without a wait."""
        buf = self.buf
        if len(buf) < n:
            return None
        data = bytes(buf[:n])
        del buf[:n]
        return data

    async def read(self, n: int) -> bytes:
        """Up to `n` bytes, waiting for some; b"" at the connection's clean end."""
        buf = self.buf
        if not buf:
            try:
                await self._more()
            except asyncio.IncompleteReadError:
                return b""
        data = bytes(buf[:n])
        del buf[:n]
        return data


async def open_conn(host: str, port: int, context: Any) -> Conn:
    loop = asyncio.get_running_loop()
    _, conn = await loop.create_connection(Conn, host, port, ssl=context,
                                           server_hostname=host if context else None)
    return conn
