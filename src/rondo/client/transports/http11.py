"""`Http11Pool`: a lean HTTP/1.1 transport under httpx, for a client that sends many requests
to one origin (the proxy's upstream link).

httpx's default transport (httpcore) costs far more CPU per request than the MCP work around it:
a connection-pool state machine, anyio streams, h11 events, and an import attempt of `sniffio`
on every lock it makes. This one is an `asyncio.Protocol` per connection (`http11_conn.Conn`)
and a small parser: keep-alive connections kept per origin, the request written in one go, the
status line and headers parsed once they are in, the body framed by Content-Length, chunked
encoding or the connection's end. A known-length body up to `WHOLE` bytes (the usual JSON
answer) is read before `post` returns, usually in the same wake as the head, and the connection
goes back to the pool at once; any other streams to its reader (so SSE answers stream as
before). A reused connection that the server had closed before answering anything is retried
once on a fresh one. Plain `http` and `https`
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
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from typing import Any

import httpx

from rondo.client.transports.http11_conn import (
    MAX_HEAD,
    Conn,
    LeanHeaders,
    body_framing,
    open_conn,
    parse_head,
    reusable_after,
)

_MAX_HEAD = MAX_HEAD
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP field name (RFC 9110 token)
_CHUNK = 64 * 1024
# A known-length answer up to this many bytes is read whole before `post` returns (in the same
# wake as its head when it came in one piece); a longer one streams (`post(whole=)` moves it).
WHOLE = 64 * 1024
Origin = tuple[str, str, int]
_REDIRECTS = frozenset((301, 302, 303, 307, 308))
_get: Callable[..., Any] = dict.get

__all__ = ["WHOLE", "Http11Pool", "LeanHeaders", "LeanResponse", "pooled_client"]


class LeanResponse:
    """What `Http11Pool.post` answers: the part of an `httpx.Response` that `HttpTransport` and
    `wire.inflate.body_of` read (status, headers, the raw body stream), nothing built besides."""

    __slots__ = ("status_code", "headers", "stream", "_content")

    def __init__(self, status: int, headers: LeanHeaders, stream: _Body) -> None:
        self.status_code = status
        self.headers = headers
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

    @property
    def whole(self) -> bytes | None:
        """The raw body (Content-Encoding not undone) when `post` read it whole, else None."""
        return self.stream.whole

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
        self._idle: dict[Origin, list[Conn]] = {}
        self._ssl: ssl.SSLContext | None = None
        self._targets: dict[str, tuple[Origin, bytes]] = {}
        self._lines: dict[tuple[str, str], bytes] = {}  # (name, value): its checked line
        # A final response head (its bytes) -> what parse_head made of it: an upstream's
        # answers mostly repeat their heads, Content-Length included.
        # The framing `_Body` read from it is kept too (its Connection, Transfer-Encoding and
        # Content-Length do not change with the bytes).
        self._heads: dict[bytes, tuple[int, LeanHeaders, bytes, tuple[bool, int | None, bool]]] = {}

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
        got = await self._exchange(origin, bytes(head) + body, timeouts.get("connect"), request, 0)
        return httpx.Response(got.status_code, headers=list(got.headers.items()), stream=got.stream,
                              extensions={"http_version": b"HTTP/1.1"})

    def header_lines(self, headers: Mapping[str, str]) -> bytes:
        """`headers` as checked request header lines (each `Name: value` and its CRLF):
        `httpx.LocalProtocolError` unless every name is a token and every value latin-1
        without CR or LF. What `post_lines` takes; a caller may keep the bytes for reuse."""
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
        return b"".join(parts)

    async def post(self, url: str, headers: Mapping[str, str], body: bytes, *,
                   connect_timeout: float | None = None, whole: int = WHOLE) -> LeanResponse:
        """A POST without httpx's client around it: no cookie jar, no auth flow, redirects not
        followed (the caller sees them), headers sent as given (plus Host, Content-Length and
        User-Agent). A known-length body of at most `whole` bytes is read before this returns
        (`LeanResponse.whole`); any other streams from the connection. Close the response to
        give the connection back. Header names and values must be latin-1 without CR or LF."""
        return await self.post_lines(url, self.header_lines(headers), body,
                                     connect_timeout=connect_timeout, whole=whole)

    def post_lines(self, url: str, lines: bytes, body: bytes, *,
                   connect_timeout: float | None = None,
                   whole: int = WHOLE) -> Coroutine[Any, Any, LeanResponse]:
        """`post` with the header lines already made by `header_lines` (await it)."""
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
        message = b"%sContent-Length: %d\r\n%s\r\n%s" % (start, len(body), lines, body)
        return self._exchange(origin, message, connect_timeout, None, whole)

    async def _exchange(self, origin: Origin, message: bytes, connect_timeout: float | None,
                        request: httpx.Request | None, whole: int) -> LeanResponse:
        """Send one request (all its bytes) and read the head of its answer: its status, its
        headers and its body's stream (the body itself too, when known and within `whole`)."""
        heads = self._heads
        for attempt in (0, 1):
            conn = self._take(origin) if attempt == 0 else None
            reused = conn is not None
            if conn is None:
                conn = await self._open(origin, connect_timeout, request)
            stream: _Body | None = None
            try:
                if conn.put(message):
                    await conn.drain()
                while True:
                    # `conn.readuntil` written out: every answer's head waits here.
                    raw = conn.until(b"\r\n\r\n", _MAX_HEAD)
                    while raw is None:
                        await conn.arrival()
                        raw = conn.until(b"\r\n\r\n", _MAX_HEAD)
                    known = heads.get(raw)
                    if known is not None:  # a head this pool parsed before, byte for byte
                        status, headers, version = known[0], LeanHeaders(known[1]), known[2]
                        framing = known[3] if request is None or request.method != "HEAD" else None
                        break
                    status, headers, version = parse_head(raw[:-4])
                    framing = None
                    if not 100 <= status < 200 or status == 101:
                        if len(raw) <= 512:  # a bounded memo of short final heads
                            if len(heads) >= 64:
                                heads.clear()
                            heads[raw] = (status, LeanHeaders(headers), version,
                                          body_framing(status, headers, version))
                        break  # a final answer (1xx interim ones skipped)
                stream = _Body(self, origin, conn, request, status, headers, version, framing)
                length = stream.length
                if length is not None and length <= whole:
                    data = conn.take(length)
                    stream.whole = await conn.readexactly(length) if data is None else data
                    stream.done = True
            except asyncio.LimitOverrunError:
                conn.close()
                raise httpx.RemoteProtocolError(f"response head over {_MAX_HEAD} bytes",
                                                request=request) from None
            except asyncio.IncompleteReadError as exc:
                conn.close()
                if stream is not None:  # the head came, its body did not all come
                    raise httpx.RemoteProtocolError("the server closed the connection mid-body",
                                                    request=request) from None
                if reused and attempt == 0 and not exc.partial:
                    continue  # a kept connection the server had closed: once more, fresh
                raise httpx.ReadError(f"connection lost: {exc!r}", request=request) from None
            except (ConnectionError, OSError) as exc:
                conn.close()
                if reused and attempt == 0:
                    continue
                raise httpx.ReadError(f"connection lost: {exc!r}", request=request) from None
            except httpx.RemoteProtocolError as exc:
                conn.close()
                raise httpx.RemoteProtocolError(str(exc), request=request) from None
            except BaseException:
                conn.close()  # cancelled mid-exchange: the connection's state is unknown
                raise
            if stream.done and stream.reusable and request is None:
                stream.give_back()  # read whole: the connection is free already
            return LeanResponse(status, headers, stream)
        raise AssertionError("unreachable")

    async def _open(self, origin: Origin, timeout: float | None,
                    request: httpx.Request | None) -> Conn:
        scheme, host, port = origin
        context: ssl.SSLContext | None = None
        if scheme == "https":
            context = self._ssl = self._ssl or ssl.create_default_context()
        try:
            async with asyncio.timeout(timeout):
                return await open_conn(host, port, context)
        except TimeoutError:
            raise httpx.ConnectTimeout(f"connecting to {host}:{port} timed out",
                                       request=request) from None
        except OSError as exc:
            raise httpx.ConnectError(f"cannot connect to {host}:{port}: {exc}",
                                     request=request) from None

    def _take(self, origin: Origin) -> Conn | None:
        idle = self._idle.get(origin)
        while idle:
            conn = idle.pop()
            if conn.usable():
                return conn
            conn.close()
        return None

    def _give_back(self, origin: Origin, conn: Conn) -> None:
        idle = self._idle.get(origin)
        if idle is None:
            idle = self._idle[origin] = []
        if len(idle) < self.max_idle and conn.usable():
            idle.append(conn)
        else:
            conn.close()  # bytes past the answer's end, too, make it unusable

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


class _Body(httpx.AsyncByteStream):
    """One response's body, framed as its headers say; the connection goes back to the pool
    once the body was read to its end (and the server did not ask to close it)."""

    def __init__(self, pool: Http11Pool, origin: Origin, conn: Conn,
                 request: httpx.Request | None,
                 status: int, headers: LeanHeaders, version: bytes,
                 framing: tuple[bool, int | None, bool] | None = None) -> None:
        self.pool, self.origin, self.conn, self.request = pool, origin, conn, request
        if framing is None:
            framing = (body_framing(status, headers, version) if request is None
                       or request.method != "HEAD" else (reusable_after(headers, version), 0, False))
        self.reusable, self.length, self.chunked = framing
        self.whole: bytes | None = None  # the body, when the pool read it whole
        self.done = False
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self.whole is not None:
            if self.whole:
                yield self.whole
            return
        conn = self.conn
        try:
            if self.chunked:
                while True:
                    line = await conn.readuntil(b"\r\n", _MAX_HEAD)
                    size = int(line.split(b";", 1)[0].strip() or b"x", 16)
                    if size == 0:
                        while await conn.readuntil(b"\r\n", _MAX_HEAD) != b"\r\n":
                            pass  # trailers
                        break
                    data = await conn.readexactly(size)
                    if await conn.readexactly(2) != b"\r\n":
                        raise httpx.RemoteProtocolError("malformed chunk", request=self.request)
                    yield data
            elif self.length is not None:
                remaining = self.length
                while remaining > 0:
                    data = await conn.read(min(remaining, _CHUNK))
                    if not data:
                        raise httpx.RemoteProtocolError("the server closed the connection "
                                                        "mid-body", request=self.request)
                    remaining -= len(data)
                    yield data
            else:
                while data := await conn.read(_CHUNK):
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
        if self.whole is not None:
            return self.whole if len(self.whole) <= limit else None
        if self.length is None or self.length > limit or self.done:
            return None
        try:
            data = await self.conn.readexactly(self.length)
        except asyncio.IncompleteReadError:
            raise httpx.RemoteProtocolError("the server closed the connection mid-body",
                                            request=self.request) from None
        except (ConnectionError, OSError) as exc:
            raise httpx.ReadError(f"connection lost: {exc!r}", request=self.request) from None
        self.done = True
        return data

    def give_back(self) -> None:
        """Done with the connection: back to the pool when the body was read to its end and
        the server keeps it alive, else closed."""
        if self.closed:
            return
        self.closed = True
        if self.done and self.reusable:
            self.pool._give_back(self.origin, self.conn)
        else:
            self.conn.close()

    async def aclose(self) -> None:
        self.give_back()


def pooled_client(**options: Any) -> httpx.AsyncClient:
    """An httpx client on an `Http11Pool` (options as `httpx.AsyncClient`'s)."""
    return httpx.AsyncClient(transport=Http11Pool(), **options)
