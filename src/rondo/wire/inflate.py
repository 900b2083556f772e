"""Bounded decoding of an HTTP `Content-Encoding`: the decoded size is counted as it is
produced, never after a whole chunk has been inflated.

A few kilobytes of `gzip, gzip` inflate to gigabytes; inflating each network chunk whole and
counting afterwards lets one chunk fill memory. Here every layer inflates at most `PIECE`
bytes per step, each layer's running total is held to `limit` (so an inner layer cannot spin
on a huge intermediate stream either), and at most `MAX_ENCODINGS` layers are accepted.
Supported: `gzip` (`x-gzip`), `deflate` (zlib-wrapped or raw) and `identity`; anything else is
refused rather than handed on undecoded. Stdlib only; callers read the raw bytes (httpx's
`aiter_raw`) and send `Accept-Encoding: ACCEPT_ENCODING`.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator
from typing import Any, Protocol

ACCEPT_ENCODING = "gzip, deflate"
MAX_ENCODINGS = 2
PIECE = 64 * 1024


class InflateError(ValueError):
    """The body cannot be decoded within its bounds."""


class TooLarge(InflateError):
    pass


class BadEncoding(InflateError):
    pass


class _Layer:
    __slots__ = ("name", "limit", "total", "_z", "_head")

    def __init__(self, name: str, limit: int | None) -> None:
        self.name, self.limit, self.total = name, limit, 0
        gzip = name in ("gzip", "x-gzip")
        self._z: Any = zlib.decompressobj(zlib.MAX_WBITS | 16) if gzip else None
        self._head = b""  # deflate: the first two bytes tell zlib-wrapped from raw

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self._z is None:
            self._head += data
            if len(self._head) < 2:
                return
            data, self._head = self._head, b""
            self._z = zlib.decompressobj(zlib.MAX_WBITS if _zlib_header(data) else -zlib.MAX_WBITS)
        while True:
            try:
                out = self._z.decompress(data, PIECE)
            except zlib.error:
                raise BadEncoding(f"the body is not valid {self.name}") from None
            if out:
                yield self._count(out)
            # A full piece may leave output pending inside zlib even with no input left.
            if len(out) < PIECE and not self._z.unconsumed_tail:
                return
            data = self._z.unconsumed_tail

    def finish(self) -> Iterator[bytes]:
        if self._z is None:  # fewer than two bytes in all
            if self._head:
                raise BadEncoding(f"the body is not valid {self.name}")
            return
        yield from self.feed(b"")
        rest = self._z.flush(PIECE)
        if rest:
            yield self._count(rest)

    def _count(self, out: bytes) -> bytes:
        self.total += len(out)
        if self.limit is not None and self.total > self.limit:
            raise TooLarge(f"the decoded body exceeds {self.limit} bytes")
        return out


class Inflater:
    """Feed raw body bytes, get decoded pieces (each at most `PIECE` bytes). `limit` caps the
    decoded total (and every layer's); None leaves the total to the caller (an SSE stream,
    bounded per line), while each step stays one piece."""

    def __init__(self, content_encoding: str, limit: int | None) -> None:
        names = [n.strip().lower() for n in content_encoding.split(",") if n.strip()]
        names = [n for n in names if n != "identity"]
        if len(names) > MAX_ENCODINGS:
            raise BadEncoding(f"{len(names)} stacked content encodings (at most {MAX_ENCODINGS})")
        for name in names:
            if name not in ("gzip", "x-gzip", "deflate"):
                raise BadEncoding(f"unsupported content encoding {name[:40]!r}")
        # Applied in the order listed, so decoded from the last. An inner layer's output is
        # compressed data, which may be a little larger than what it decodes to.
        inner = None if limit is None else limit + limit // 64 + 4096
        self._layers = [_Layer(name, limit if i == len(names) - 1 else inner)
                        for i, name in enumerate(reversed(names))]
        self.limit = limit
        self.total = 0

    def feed(self, raw: bytes) -> Iterator[bytes]:
        yield from self._through(0, raw, final=False)

    def finish(self) -> Iterator[bytes]:
        yield from self._through(0, b"", final=True)

    def _through(self, depth: int, data: bytes, *, final: bool) -> Iterator[bytes]:
        if depth == len(self._layers):
            if data:
                self.total += len(data)
                if self.limit is not None and self.total > self.limit:
                    raise TooLarge(f"the decoded body exceeds {self.limit} bytes")
                yield data
            return
        layer = self._layers[depth]
        if data:
            for piece in layer.feed(data):
                yield from self._through(depth + 1, piece, final=False)
        if final:
            for piece in layer.finish():
                yield from self._through(depth + 1, piece, final=False)
            yield from self._through(depth + 1, b"", final=True)


def _zlib_header(head: bytes) -> bool:
    """RFC 1950: deflate method and a header checksum divisible by 31."""
    return head[0] & 0x0F == 8 and (head[0] << 8 | head[1]) % 31 == 0


class _Response(Protocol):  # what is used of an httpx.Response
    @property
    def headers(self) -> _Headers: ...
    @property
    def is_stream_consumed(self) -> bool: ...
    @property
    def content(self) -> bytes: ...
    def aiter_raw(self) -> AsyncIterator[bytes]: ...


class _Headers(Protocol):
    def get(self, key: str, default: str = "") -> str: ...


async def body_of(response: _Response, limit: int | None) -> AsyncIterator[bytes]:
    """An httpx response's body decoded within bounds. A response built in-process with its
    body (as `httpx.MockTransport` handlers do) was read, and decoded, when it was made."""
    if response.is_stream_consumed:
        content = response.content
        if limit is not None and len(content) > limit:
            raise TooLarge(f"the decoded body exceeds {limit} bytes")
        if content:
            yield content
        return
    async for piece in inflate(response.aiter_raw(), response.headers.get("content-encoding", ""), limit):
        yield piece


async def inflate(raw: AsyncIterator[bytes], content_encoding: str, limit: int | None) -> AsyncIterator[bytes]:
    """The decoded pieces of a raw body stream; raises `InflateError` beyond the bounds."""
    inflater = Inflater(content_encoding, limit)
    async for chunk in raw:
        for piece in inflater.feed(chunk):
            yield piece
    for piece in inflater.finish():
        yield piece


async def read_body(response: _Response, limit: int) -> bytes:
    """The whole decoded body, refused (`TooLarge`) as soon as it passes `limit` bytes."""
    body = bytearray()
    async for piece in body_of(response, limit):
        body += piece
    return bytes(body)
