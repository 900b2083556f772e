"""`Http11Pool`: a lean HTTP/1.1 transport under httpx, for a client that sends many requests
to one origin (the proxy's upstream link).

httpx's default transport (httpcore) costs far more CPU per request than the MCP work around it:
a connection-pool state machine, anyio streams, h11 events, and an import attempt of `sniffio`
on every lock it makes. This one is asyncio streams and a small parser: keep-alive connections
kept per origin, the request written in one go, the status line and headers read with one
`readuntil`, the body framed by Content-Length, chunked encoding or the connection's end, and
streamed to httpx (so SSE answers stream as before). A reused connection that the server had
closed before answering anything is retried once on a fresh one. Plain `http` and `https`
(verified with the system's default context); nothing else: no HTTP/2, no proxies (the
`HttpTransport` in front of it refuses redirects anyway).

`Http11Pool.post` skips httpx's client as well (no URL parsing, header merging, cookie jar or
auth flow per request): `HttpTransport` sends its POSTs there when it was given this pool and
no `auth=`. Its answer is a `LeanResponse`, not an `httpx.Response`: the status, the headers as
a plain dict (names lower-cased, repeated ones joined with ", " as httpx does), and the same
streamed body, without httpx's header and response models built around them for each call.
"""

from __future__ import annotations

import asyncio
import re
import ssl
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

_MAX_HEAD = 64 * 1024
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP field name (RFC 9110 token)
_CHUNK = 64 * 1024
Origin = tuple[str, str, int]


class _Conn:
    __slots__ = ("reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def usable(self) -> bool:
        return not self.writer.is_closing() and not self.reader.at_eof()

    def close(self) -> None:
        self.writer.close()


_REDIRECTS = frozenset((301, 302, 303, 307, 308))


class LeanHeaders(dict[str, str]):
    """A response's headers: lower-cased names, latin-1 values, repeated ones joined."""

    __slots__ = ()

    def get(self, key: str, default: Any = None) -> Any:
        return dict.get(self, key.lower(), default)

    def __getitem__(self, key: str) -> str:
        return dict.__getitem__(self, key.lower())

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key.lower() if isinstance(key, str) else key)


class LeanResponse:
    """What `Http11Pool.post` answers: the part of an `httpx.Response` that `HttpTransport` and
    `wire.inflate.body_of` read (status, headers, the raw body stream), nothing built besides."""

    __slots__ = ("status_code", "headers", "stream", "_content")

    def __init__(self, status: int, headers: list[tuple[bytes, bytes]], stream: _Body) -> None:
        self.status_code = status
        found = LeanHeaders()
        for name, value in headers:
            key, text = name.decode("latin-1").lower(), value.decode("latin-1")
            found[key] = f"{found[key]}, {text}" if key in found else text
        self.headers = found
        self.stream = stream
        self._content: bytes | None = None

    @property
    def is_redirect(self) -> bool:
        return self.status_code in _REDIRECTS and "location" in self.headers

    @property
    def is_stream_consumed(self) -> bool:
        return self._content is not None

    @property
    def content(self) -> bytes:
        """The decoded body, once `aread` has read it."""
        if self._content is None:
            raise httpx.ResponseNotRead()
        return self._content

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body as it arrives (Content-Encoding not undone)."""
        async for piece in self.stream:
            yield piece

    async def aread(self) -> bytes:
        """The whole body, Content-Encoding undone (unbounded: `wire.inflate.read_body` bounds)."""
        if self._content is None:
            from rondo.wire.inflate import body_of

            body = bytearray()
            async for piece in body_of(self, None):
                body += piece
            self._content = bytes(body)
        return self._content

    async def aclose(self) -> None:
        await self.stream.aclose()


class Http11Pool(httpx.AsyncBaseTransport):
    """See the module docstring. `max_idle` bounds the idle connections kept per origin."""

    def __init__(self, *, max_idle: int = 64) -> None:
        if not isinstance(max_idle, int) or max_idle < 0:
            raise ValueError("max_idle must be a non-negative integer")
        self.max_idle = max_idle
        self._idle: dict[Origin, list[_Conn]] = {}
        self._ssl: ssl.SSLContext | None = None
        self._targets: dict[str, tuple[Origin, bytes]] = {}
        self._lines: dict[tuple[str, str], bytes] = {}  # (name, value): its checked line

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme not in ("http", "https"):
            raise httpx.UnsupportedProtocol(f"unsupported scheme {url.scheme!r}", request=request)
        origin = (url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80))
        body = await request.aread()
        head = bytearray(b"%s %s HTTP/1.1\r\n" % (request.method.encode("ascii"), url.raw_path))
        for name, value in request.headers.raw:
            head += name + b": " + value + b"\r\n"
        head += b"\r\n"
        timeouts = request.extensions.get("timeout") or {}
        status, headers, stream = await self._exchange(origin, bytes(head) + body,
                                                       timeouts.get("connect"), request)
        return httpx.Response(status, headers=headers, stream=stream,
                              extensions={"http_version": b"HTTP/1.1"})

    async def post(self, url: str, headers: Mapping[str, str], body: bytes, *,
                   connect_timeout: float | None = None) -> LeanResponse:
        """A POST without httpx's client around it: no cookie jar, no auth flow, redirects not
        followed (the caller sees them), headers sent as given (plus Host, Content-Length and
        User-Agent). The response's body streams from the connection; close it to give the
        connection back. Header names and values must be latin-1 without CR or LF."""
        target = self._targets.get(url)
        if target is None:
            parsed = httpx.URL(url)
            if parsed.scheme not in ("http", "https"):
                raise httpx.UnsupportedProtocol(f"unsupported scheme {parsed.scheme!r}")
            origin = (parsed.scheme, parsed.host,
                      parsed.port or (443 if parsed.scheme == "https" else 80))
            host = parsed.netloc
            target = self._targets[url] = (origin, b"POST " + parsed.raw_path + b" HTTP/1.1\r\n"
                                           b"Host: " + host + b"\r\nUser-Agent: rondo\r\n")
            if len(self._targets) > 64:  # a bounded memo of the URLs this pool posts to
                self._targets.pop(next(iter(self._targets)))
        origin, start = target
        parts = []
        lines_of = self._lines
        for item in headers.items():
            line = lines_of.get(item)
            if line is None:
                line = _header_line(*item)
                if len(lines_of) >= 256:  # a bounded memo of the header lines checked before
                    lines_of.clear()
                lines_of[item] = line
            parts.append(line)
        lines = b"".join(parts)
        message = b"%sContent-Length: %d\r\n%s\r\n%s" % (start, len(body), lines, body)
        return LeanResponse(*await self._exchange(origin, message, connect_timeout, None))

    async def _exchange(self, origin: Origin, message: bytes, connect_timeout: float | None,
                        request: httpx.Request | None
                        ) -> tuple[int, list[tuple[bytes, bytes]], _Body]:
        """Send one request (all its bytes) and read the head of its answer: its status, its
        headers and its body's stream."""
        for attempt in (0, 1):
            conn = self._take(origin) if attempt == 0 else None
            reused = conn is not None
            if conn is None:
                conn = await self._open(origin, connect_timeout, request)
            try:
                conn.writer.write(message)
                await conn.writer.drain()
                status, headers, version = await _read_head(conn.reader)
            except (asyncio.IncompleteReadError, ConnectionError, OSError) as exc:
                conn.close()
                if reused and attempt == 0:
                    continue  # a kept connection the server had closed: once more, fresh
                raise httpx.ReadError(f"connection lost: {exc!r}", request=request) from None
            except httpx.RemoteProtocolError as exc:
                conn.close()
                raise httpx.RemoteProtocolError(str(exc), request=request) from None
            except BaseException:
                conn.close()  # cancelled mid-exchange: the connection's state is unknown
                raise
            return status, headers, _Body(self, origin, conn, request, status, headers, version)
        raise AssertionError("unreachable")

    async def _open(self, origin: Origin, timeout: float | None,
                    request: httpx.Request | None) -> _Conn:
        scheme, host, port = origin
        context: ssl.SSLContext | None = None
        if scheme == "https":
            context = self._ssl = self._ssl or ssl.create_default_context()
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    host, port, ssl=context, server_hostname=host if context else None,
                    limit=_MAX_HEAD)
        except TimeoutError:
            raise httpx.ConnectTimeout(f"connecting to {host}:{port} timed out",
                                       request=request) from None
        except OSError as exc:
            raise httpx.ConnectError(f"cannot connect to {host}:{port}: {exc}",
                                     request=request) from None
        return _Conn(reader, writer)

    def _take(self, origin: Origin) -> _Conn | None:
        idle = self._idle.get(origin)
        while idle:
            conn = idle.pop()
            if conn.usable():
                return conn
            conn.close()
        return None

    def _give_back(self, origin: Origin, conn: _Conn) -> None:
        idle = self._idle.setdefault(origin, [])
        if len(idle) < self.max_idle and conn.usable():
            idle.append(conn)
        else:
            conn.close()

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for conn in idle:
                conn.close()
        self._idle.clear()


def _header_line(name: str, value: str) -> bytes:
    """`Name: value` and its CRLF, refused unless the name is a token and the value latin-1
    without CR or LF."""
    if "\r" in value or "\n" in value or not _TOKEN.fullmatch(name):
        raise httpx.LocalProtocolError(f"header {name[:40]!r} holds CR or LF, or its "
                                       "name is not a token")
    try:
        return b"%s: %s\r\n" % (name.encode("ascii"), value.encode("latin-1"))
    except UnicodeEncodeError:
        raise httpx.LocalProtocolError(f"header {name!r} is not latin-1") from None


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """The status, headers and version of the next final response (1xx ones skipped)."""
    while True:
        try:
            raw = await reader.readuntil(b"\r\n\r\n")
        except asyncio.LimitOverrunError:
            raise httpx.RemoteProtocolError(f"response head over {_MAX_HEAD} bytes") from None
        lines = raw[:-4].split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
            raise httpx.RemoteProtocolError(f"malformed status line {lines[0][:80]!r}")
        status = int(parts[1])
        headers = []
        for line in lines[1:]:
            name, sep, value = line.partition(b":")
            if not sep or not name or name != name.strip():
                raise httpx.RemoteProtocolError(f"malformed header line {line[:80]!r}")
            headers.append((name, value.strip()))
        if not 100 <= status < 200 or status == 101:
            return status, headers, parts[0]


class _Body(httpx.AsyncByteStream):
    """One response's body, framed as its headers say; the connection goes back to the pool
    once the body was read to its end (and the server did not ask to close it)."""

    def __init__(self, pool: Http11Pool, origin: Origin, conn: _Conn,
                 request: httpx.Request | None,
                 status: int, headers: list[tuple[bytes, bytes]], version: bytes) -> None:
        self.pool, self.origin, self.conn, self.request = pool, origin, conn, request
        lower = {name.lower(): value for name, value in headers}
        self.reusable = (version == b"HTTP/1.1"
                         and b"close" not in lower.get(b"connection", b"").lower())
        self.length: int | None = None
        self.chunked = False
        if (request is not None and request.method == "HEAD") or status in (204, 304):
            self.length = 0
        elif b"chunked" in lower.get(b"transfer-encoding", b"").lower():
            self.chunked = True
        elif lower.get(b"content-length", b"").strip().isdigit():
            self.length = int(lower[b"content-length"])
        else:
            self.reusable = False  # delimited by the connection's end
        self.done = False
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        reader = self.conn.reader
        try:
            if self.chunked:
                while True:
                    line = await reader.readuntil(b"\r\n")
                    size = int(line.split(b";", 1)[0].strip() or b"x", 16)
                    if size == 0:
                        while await reader.readuntil(b"\r\n") != b"\r\n":
                            pass  # trailers
                        break
                    data = await reader.readexactly(size)
                    if await reader.readexactly(2) != b"\r\n":
                        raise httpx.RemoteProtocolError("malformed chunk", request=self.request)
                    yield data
            elif self.length is not None:
                remaining = self.length
                while remaining > 0:
                    data = await reader.read(min(remaining, _CHUNK))
                    if not data:
                        raise httpx.RemoteProtocolError("the server closed the connection "
                                                        "mid-body", request=self.request)
                    remaining -= len(data)
                    yield data
            else:
                while data := await reader.read(_CHUNK):
                    yield data
            self.done = True
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
            raise httpx.RemoteProtocolError(f"malformed response body: {exc!r}",
                                            request=self.request) from None
        except (ConnectionError, OSError) as exc:
            raise httpx.ReadError(f"connection lost: {exc!r}", request=self.request) from None

    async def read_whole(self, limit: int) -> bytes | None:
        """The whole body in one read when its length is known and within `limit`; None when
        it is not (then read it as a stream)."""
        if self.length is None or self.length > limit or self.done:
            return None
        try:
            data = await self.conn.reader.readexactly(self.length)
        except asyncio.IncompleteReadError:
            raise httpx.RemoteProtocolError("the server closed the connection mid-body",
                                            request=self.request) from None
        except (ConnectionError, OSError) as exc:
            raise httpx.ReadError(f"connection lost: {exc!r}", request=self.request) from None
        self.done = True
        return data

    async def aclose(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.done and self.reusable:
            self.pool._give_back(self.origin, self.conn)
        else:
            self.conn.close()


def pooled_client(**options: Any) -> httpx.AsyncClient:
    """An httpx client on an `Http11Pool` (options as `httpx.AsyncClient`'s)."""
    return httpx.AsyncClient(transport=Http11Pool(), **options)
