"""Issue 37 defects 1 and 2: compressed answers are decoded within the client's caps as they
inflate (JSON, SSE, and every fetch the auth code makes), and SSE line splitting is linear."""

from __future__ import annotations

import asyncio
import gzip
import re
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rondo.client.errors import ProtocolError
from rondo.client.transports import sse
from rondo.client.transports.http import HttpTransport
from rondo.wire.inflate import MAX_ENCODINGS, PIECE, BadEncoding, Inflater, TooLarge
from tests.helpers.helpers_core import request

URL = "http://127.0.0.1:9/mcp"
DECODED = 64 << 20  # what the bomb inflates to
CAP = 1 << 20  # the client's cap in these tests


def _gzip_stream(size: int) -> bytes:
    z = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = b" " * (1 << 20)
    out = b"".join(z.compress(block) for _ in range(size >> 20))
    return out + z.flush()


BOMB = gzip.compress(_gzip_stream(DECODED), 9)  # `gzip, gzip`: 64 MiB from a few kilobytes


class Drip(httpx.AsyncByteStream):
    """A body that arrives from the network in chunks (httpx does not read it in advance, as
    it does a body given as `content=`)."""

    def __init__(self, data: bytes, size: int = 4096) -> None:
        self.data, self.size = data, size

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for i in range(0, len(self.data), self.size):
            yield self.data[i:i + self.size]


def bomb_response(ctype: str) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": ctype, "content-encoding": "gzip, gzip"},
                          stream=Drip(BOMB))


def peak_of(coro: Any) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        try:
            result: Any = asyncio.run(coro)
        except Exception as exc:  # noqa: BLE001 - the caller checks which
            result = exc
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_bomb_is_small_on_the_wire() -> None:
    assert len(BOMB) < 16 * 1024


@pytest.mark.parametrize("ctype", ["application/json", "text/event-stream"])
def test_a_compressed_bomb_is_refused_at_the_cap_without_inflating_it(ctype: str) -> None:
    async def go() -> Any:
        http = httpx.AsyncClient(transport=httpx.MockTransport(lambda req: bomb_response(ctype)))
        t = HttpTransport(URL, http_client=http, max_response=CAP, max_event=CAP)
        await t.start(lambda message: asyncio.sleep(0))
        try:
            return await t.request(request("tools/list", id=1))
        finally:
            await t.close()

    result, peak = peak_of(go())
    assert isinstance(result, ProtocolError), result
    assert str(CAP) in str(result)
    # Before: each chunk was inflated whole, so the peak held the 64 MiB (4 GB from 3.4 KB).
    assert peak < 4 * CAP, peak


def test_the_client_asks_only_for_encodings_it_decodes_within_bounds() -> None:
    seen: list[str] = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req.headers["accept-encoding"])
        return httpx.Response(200, headers={"content-type": "application/json", "content-encoding": "br"},
                              stream=Drip(b"not brotli"))

    async def go() -> None:
        t = HttpTransport(URL, http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))
        await t.start(lambda message: asyncio.sleep(0))
        await t.request(request("tools/list", id=1))

    with pytest.raises(ProtocolError, match="unsupported content encoding 'br'"):
        asyncio.run(go())
    assert seen == ["gzip, deflate"]


def test_a_compressed_bomb_from_an_authorization_server_is_refused_by_the_client_fetch() -> None:
    from rondo.client.auth.errors import AuthError
    from rondo.client.auth.fetch import Limits, exchange

    async def go() -> Any:
        http = httpx.AsyncClient(transport=httpx.MockTransport(lambda req: bomb_response("application/json")))
        return await exchange(http, "GET", "https://as.test/.well-known/oauth-authorization-server", Limits())

    result, peak = peak_of(go())
    assert isinstance(result, AuthError), result
    assert "larger than 262144 bytes" in str(result)
    assert peak < 4 * CAP, peak


def test_a_compressed_bomb_from_an_authorization_server_is_refused_by_the_verifier_fetch() -> None:
    from rondo.auth import VerifierUnavailable
    from rondo.auth.fetch import Fetcher

    fetcher = Fetcher()
    fetcher._http = lambda: httpx.AsyncClient(  # type: ignore[method-assign]
        transport=httpx.MockTransport(lambda req: bomb_response("application/json")))
    result, peak = peak_of(fetcher.json("https://as.test/jwks"))
    assert isinstance(result, VerifierUnavailable), result
    assert "more than 262144 bytes" in str(result)
    assert peak < 4 * CAP, peak


# -- the inflater itself ------------------------------------------------------------------------

ENCODERS = {
    "gzip": lambda data: gzip.compress(data),
    "deflate": lambda data: zlib.compress(data),
    "raw-deflate": lambda data: _raw_deflate(data),
}


def _raw_deflate(data: bytes) -> bytes:
    z = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return z.compress(data) + z.flush()


def _pieces(data: bytes, cuts: list[int]) -> Iterator[bytes]:
    start = 0
    for cut in sorted(c % (len(data) + 1) for c in cuts):
        yield data[start:cut]
        start = cut
    yield data[start:]


@settings(max_examples=150, deadline=None)
@given(body=st.binary(max_size=3000), long=st.booleans(),
       layers=st.lists(st.sampled_from(sorted(ENCODERS)), max_size=MAX_ENCODINGS),
       cuts=st.lists(st.integers(min_value=0, max_value=1 << 20), max_size=8))
def test_any_stack_of_encodings_in_any_chunking_decodes_to_the_original(
        body: bytes, long: bool, layers: list[str], cuts: list[int]) -> None:
    body = body + b"x" * (3 * PIECE + 7) if long else body
    wire = body
    for name in layers:
        wire = ENCODERS[name](wire)
    header = ", ".join("deflate" if name == "raw-deflate" else name for name in layers)
    inflater = Inflater(header, limit=len(body))
    out = [piece for chunk in _pieces(wire, cuts) for piece in inflater.feed(chunk)]
    out += list(inflater.finish())
    assert b"".join(out) == body
    if layers:  # what is decoded comes in bounded pieces (identity passes chunks through)
        assert all(len(piece) <= PIECE for piece in out)


@settings(max_examples=50, deadline=None)
@given(size=st.integers(min_value=1, max_value=5 * PIECE), limit=st.integers(min_value=0, max_value=5 * PIECE))
def test_the_limit_is_exact(size: int, limit: int) -> None:
    wire = gzip.compress(gzip.compress(b"a" * size))
    inflater = Inflater("gzip, gzip", limit)
    if size <= limit:
        assert b"".join([*inflater.feed(wire), *inflater.finish()]) == b"a" * size
    else:
        with pytest.raises(TooLarge, match=f"exceeds {limit} bytes"):
            list(inflater.feed(wire)) + list(inflater.finish())


def test_more_stacked_encodings_than_allowed_are_refused_before_reading() -> None:
    with pytest.raises(BadEncoding, match=f"3 stacked content encodings \\(at most {MAX_ENCODINGS}\\)"):
        Inflater("gzip, gzip, gzip", CAP)


def test_a_corrupt_body_is_a_bad_encoding() -> None:
    inflater = Inflater("gzip", CAP)
    with pytest.raises(BadEncoding, match="not valid gzip"):
        list(inflater.feed(b"\x1f\x8b this is not gzip at all"))


# -- defect 2: SSE lines ------------------------------------------------------------------------


class CountingPattern:
    """Stands in for the line-end pattern and counts the bytes it is asked to scan."""

    def __init__(self) -> None:
        self.scanned = 0

    def finditer(self, buffer: Any, pos: int = 0) -> Iterator[Any]:
        self.scanned += len(buffer) - pos
        return sse.re.compile(rb"\r\n|\r|\n").finditer(buffer, pos)


def test_a_newline_free_line_is_scanned_once_and_refused_at_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    spy = CountingPattern()
    monkeypatch.setattr(sse, "_LINE_END", spy)  # before the fix every chunk rescanned the buffer
    chunk, limit = b"x" * 4096, 4 << 20

    async def chunks() -> AsyncIterator[bytes]:
        while True:
            yield chunk

    async def go() -> None:
        async for _ in sse.bounded_lines(chunks(), limit):
            pass

    with pytest.raises(ProtocolError, match=f"longer than {limit} bytes"):
        asyncio.run(go())
    assert limit < spy.scanned <= limit + 2 * len(chunk)


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=20), max_size=12),
       endings=st.lists(st.sampled_from(["\n", "\r", "\r\n"]), min_size=12, max_size=12),
       cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=10))
def test_lines_survive_any_chunking(lines: list[str], endings: list[str], cuts: list[int]) -> None:
    text = "".join(line + ending for line, ending in zip(lines, endings, strict=False))
    data = text.encode()

    async def chunks() -> AsyncIterator[bytes]:
        for piece in _pieces(data, cuts):
            yield piece

    async def go() -> list[str]:
        return [line async for line in sse.bounded_lines(chunks(), 1000)]

    # WHATWG: CRLF, CR or LF ends a line ("\r" then "\n" is one ending, even across chunks).
    expected = re.split(r"\r\n|\r|\n", text)[:-1]
    assert asyncio.run(go()) == expected
    assert len(expected) >= len([line for line in lines if line])
