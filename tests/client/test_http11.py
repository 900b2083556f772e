"""`Http11Pool` (the proxy's lean HTTP/1.1 transport under httpx) against a scripted raw
server: framing by Content-Length, chunked encoding and the connection's end; keep-alive reuse;
a kept connection the server closed retried once, fresh; malformed and oversized heads refused
with httpx errors (which `HttpTransport` turns into TransportError)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rondo.client.transports.http11 import Http11Pool

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[bool]]


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return head + await reader.readexactly(length)


async def serve(script: Script, requests: list[bytes] | None = None,
                ) -> tuple[asyncio.Server, str, list[int]]:
    """A server whose every connection runs `script(reader, writer, n)` per request (n counts
    requests on that connection) until it returns False; `opened` counts connections, and
    `requests` (when given) gets each request as read, head and body."""
    opened: list[int] = []

    async def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        opened.append(1)
        n = 0
        try:
            while True:
                try:
                    request = await read_request(reader)
                except asyncio.IncompleteReadError:
                    break
                if requests is not None:
                    requests.append(request)
                n += 1
                if not await script(reader, writer, n):
                    break
        finally:
            writer.close()

    server = await asyncio.start_server(on_connection, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}/mcp", opened


def run(script: Script, go: Callable[[httpx.AsyncClient, str, list[int]], Awaitable[None]]) -> None:
    async def main() -> None:
        server, url, opened = await serve(script)
        try:
            async with httpx.AsyncClient(transport=Http11Pool()) as client:
                await asyncio.wait_for(go(client, url, opened), 10)
        finally:
            server.close()

    asyncio.run(main())


def run_pool(script: Script, go: Callable[[Http11Pool, str, list[int]], Awaitable[None]],
             requests: list[bytes] | None = None) -> None:
    """`go(pool, url, opened)` with a bare `Http11Pool` (no httpx client) against `serve(script)`;
    the pool and the server are closed after it, however it ends."""
    async def main() -> None:
        server, url, opened = await serve(script, requests)
        pool = Http11Pool()
        try:
            await go(pool, url, opened)
        finally:
            await pool.aclose()
            server.close()

    asyncio.run(main())


def answer(raw: bytes, *, keep: bool = True) -> Script:
    """A script writing `raw` to every request, then keeping the connection (or closing it)."""
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        writer.write(raw)
        await writer.drain()
        return keep

    return script


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


def test_content_length_bodies_reuse_one_kept_connection() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        body = b'{"n": %d}' % n
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        return True

    async def go(client: httpx.AsyncClient, url: str, opened: list[int]) -> None:
        for n in (1, 2, 3):
            response = await client.post(url, content=b'{"x": 1}')
            assert response.status_code == 200 and response.json() == {"n": n}
        assert len(opened) == 1  # three requests, one connection

    run(script, go)


def test_chunked_and_close_delimited_bodies_and_connection_close() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        if n == 1:
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                         b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n")
            await writer.drain()
            return True
        writer.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end")
        await writer.drain()
        return False

    async def go(client: httpx.AsyncClient, url: str, opened: list[int]) -> None:
        assert (await client.post(url, content=b"a")).content == b"hello world"
        assert (await client.post(url, content=b"b")).content == b"until the end"
        # The server closed after the second: the next request opens a new connection.
        assert (await client.post(url, content=b"c")).content == b"hello world"
        assert len(opened) == 2

    run(script, go)


def test_a_kept_connection_the_server_closed_is_retried_once_fresh() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        if n == 2:
            return False  # closes without answering the connection's second request
        writer.write(OK)
        await writer.drain()
        return True

    async def go(client: httpx.AsyncClient, url: str, opened: list[int]) -> None:
        assert (await client.post(url, content=b"1")).content == b"ok"
        assert (await client.post(url, content=b"2")).content == b"ok"  # retried, fresh
        assert len(opened) == 2

    run(script, go)


def test_a_fresh_connection_closed_before_answering_is_an_error_not_a_retry() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        return False

    async def go(client: httpx.AsyncClient, url: str, opened: list[int]) -> None:
        with pytest.raises(httpx.ReadError, match="connection lost"):
            await client.post(url, content=b"1")
        assert len(opened) == 1

    run(script, go)


@pytest.mark.parametrize(("reply", "message"), [
    (b"HTTP/1.1 OK\r\n\r\n", "malformed status line"),
    (b"SPDY/3 200 OK\r\n\r\n", "malformed status line"),
    (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed header line"),
    (b"HTTP/1.1 200 OK\r\n" + b"X-Big: " + b"a" * 70_000 + b"\r\n\r\n", "response head over"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "malformed response body"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "closed the connection mid-body"),
])
def test_malformed_answers_are_httpx_protocol_errors(reply: bytes, message: str) -> None:
    async def go(client: httpx.AsyncClient, url: str, opened: list[int]) -> None:
        with pytest.raises(httpx.RemoteProtocolError, match=message):
            await client.post(url, content=b"1")

    run(answer(reply, keep=False), go)


def test_interim_responses_are_skipped_and_no_body_statuses_read_nothing() -> None:
    async def go(client: httpx.AsyncClient, url: str, opened: list[int]) -> None:
        for _ in range(2):
            response = await client.post(url, content=b"1")
            assert response.status_code == 204 and response.content == b""
        assert len(opened) == 1

    run(answer(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"), go)


def test_an_unreachable_origin_is_a_connect_error() -> None:
    async def main() -> None:
        async with httpx.AsyncClient(transport=Http11Pool()) as client:
            with pytest.raises(httpx.ConnectError, match="cannot connect"):
                await client.post("http://127.0.0.1:9/mcp", content=b"1")

    asyncio.run(main())


@settings(max_examples=40, deadline=None)
@given(pieces=st.lists(st.binary(min_size=1, max_size=300), min_size=1, max_size=6))
def test_any_chunking_reassembles_the_body(pieces: list[bytes]) -> None:
    out = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    for piece in pieces:
        out += b"%x\r\n%s\r\n" % (len(piece), piece)

    async def go(client: httpx.AsyncClient, url: str, opened: list[int]) -> None:
        assert (await client.post(url, content=b"1")).content == b"".join(pieces)

    run(answer(out + b"0\r\n\r\n"), go)


def test_post_without_httpx_client_reuses_the_connection_and_sends_the_headers_given() -> None:
    seen: list[bytes] = []

    async def go(pool: Http11Pool, url: str, opened: list[int]) -> None:
        for n in range(2):
            response = await pool.post(url + "?x=1", {"Mcp-Method": "tools/call"},
                                       b'{"n": %d}' % n)
            assert response.status_code == 200 and await response.aread() == b"ok"
            await response.aclose()
        for bad, message in (({"X-Evil": "a\r\nInjected: 1"}, "CR or LF"),
                             ({"X-Evil": "a\nb"}, "CR or LF"),
                             ({"X-Evil: 1\r\nX": "b"}, "not a token"),
                             ({"X-Name": "caf\u00e9 \u2603"}, "not latin-1")):
            with pytest.raises(httpx.LocalProtocolError, match=message):
                await pool.post(url, bad, b"{}")

    run_pool(answer(OK), go, seen)
    assert len(seen) == 2
    first = seen[0].split(b"\r\n")
    assert first[0] == b"POST /mcp?x=1 HTTP/1.1"
    assert b"Mcp-Method: tools/call" in first and b"Content-Length: 8" in first
    assert seen[1].endswith(b'{"n": 1}')


def test_read_whole_takes_a_known_length_body_in_one_read_within_its_limit() -> None:
    async def go(pool: Http11Pool, url: str, opened: list[int]) -> None:
        response = await pool.post(url, {}, b"{}")
        assert await response.stream.read_whole(10) == b"0123456789"  # type: ignore[attr-defined]
        await response.aclose()
        response = await pool.post(url, {}, b"{}")  # the same connection, given back
        assert await response.stream.read_whole(9) is None  # type: ignore[attr-defined]
        assert await response.aread() == b"0123456789"  # over the limit: streamed instead
        await response.aclose()
        assert len(opened) == 1

    run_pool(answer(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789"), go)


def test_post_answers_a_lean_response_with_httpx_header_semantics_and_a_decoded_aread() -> None:
    import gzip

    packed = gzip.compress(b'{"ok": true}')

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        if n == 1:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Twice: a\r\n"
                         b"x-twice: b\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s"
                         % (len(packed), packed))
        else:
            writer.write(b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /mcp/\r\n"
                         b"Content-Length: 0\r\n\r\n")
        await writer.drain()
        return True

    async def go(pool: Http11Pool, url: str, opened: list[int]) -> None:
        response = await pool.post(url, {}, b"{}")
        assert response.status_code == 200 and not response.is_redirect
        assert response.headers.get("Content-Type") == "application/json"
        assert response.headers["X-TWICE"] == "a, b"  # repeated: joined, as httpx does
        assert "content-encoding" in response.headers and "Nope" not in response.headers
        assert response.headers.get("missing", "") == ""
        assert not response.is_stream_consumed
        with pytest.raises(httpx.ResponseNotRead, match="read"):
            _ = response.content
        assert await response.aread() == b'{"ok": true}'  # Content-Encoding undone
        assert response.is_stream_consumed and response.content == b'{"ok": true}'
        await response.aclose()
        response = await pool.post(url, {}, b"{}")  # the same connection, given back
        assert response.status_code == 307 and response.is_redirect
        assert response.headers["location"] == "/mcp/"
        await response.aclose()
        assert len(opened) == 1

    run_pool(script, go)


def test_a_checked_header_line_is_remembered_and_a_bad_one_never_is() -> None:
    async def go(pool: Http11Pool, url: str, opened: list[int]) -> None:
        for _ in range(2):
            response = await pool.post(url, {"Mcp-Name": "add"}, b"{}")
            assert await response.aread() == b"ok"
            await response.aclose()
        assert pool._lines == {("Mcp-Name", "add"): b"Mcp-Name: add\r\n"}
        for _ in range(2):  # refused each time: a refusal is not remembered
            with pytest.raises(httpx.LocalProtocolError, match="CR or LF"):
                await pool.post(url, {"Mcp-Name": "a\r\nX: 1"}, b"{}")
        assert len(pool._lines) == 1
        for n in range(300):  # the memo stays bounded
            response = await pool.post(url, {"X-N": str(n)}, b"{}")
            await response.aread()
            await response.aclose()
        assert len(pool._lines) <= 256

    run_pool(answer(OK), go)


# -- the connection protocol and the head parser (http11_conn.py) ---------------------------------

_HEAD_NAME = st.from_regex(r"[A-Za-z][A-Za-z0-9-]{0,15}", fullmatch=True)
_HEAD_VALUE = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF,
                                    blacklist_characters="\x7f"), max_size=30)


@settings(max_examples=200, deadline=None)
@given(status=st.integers(100, 599), minor=st.sampled_from([b"0", b"1"]),
       fields=st.lists(st.tuples(_HEAD_NAME, _HEAD_VALUE), max_size=8))
def test_parse_head_reads_what_a_server_wrote(status: int, minor: bytes,
                                              fields: list[tuple[str, str]]) -> None:
    from rondo.client.transports.http11_conn import parse_head

    raw = b"HTTP/1." + minor + b" %d Some Reason" % status + b"".join(
        b"\r\n" + name.encode() + b": " + value.encode("latin-1") for name, value in fields)
    got, headers, version = parse_head(raw)
    assert got == status and version == b"HTTP/1." + minor
    expected: dict[str, str] = {}
    for name, value in fields:  # names lower-cased, values stripped, repeats joined
        key, text = name.lower(), value.strip(" \t\n\r\x0b\x0c")
        expected[key] = f"{expected[key]}, {text}" if key in expected else text
    assert dict(headers) == expected
    for name, _value in fields:
        assert headers[name.upper()] == expected[name.lower()]


@settings(max_examples=200, deadline=None)
@given(raw=st.binary(max_size=200))
def test_parse_head_refuses_garbage_with_a_protocol_error_only(raw: bytes) -> None:
    from rondo.client.transports.http11_conn import parse_head

    try:
        status, _, version = parse_head(raw)
    except httpx.RemoteProtocolError:
        return
    assert version.startswith(b"HTTP/1.") and 100 <= status <= 599
    code = raw.split(b"\r\n", 1)[0].split(b" ", 2)[1]
    assert len(code) == 3 and code == b"%d" % status  # exactly the three digits it was given


@settings(max_examples=300, deadline=None)
@given(code=st.one_of(st.integers(0, 10**6).map(lambda n: b"%d" % n),
                      st.text("0123456789", max_size=6).map(str.encode)),
       rest=st.sampled_from([b"", b" OK", b" ", b"\r\nA: b"]))
def test_parse_head_takes_a_status_of_three_digits_from_100_to_599_and_refuses_the_rest(
        code: bytes, rest: bytes) -> None:
    from rondo.client.transports.http11_conn import parse_head

    raw = b"HTTP/1.1 " + code + rest
    if len(code) == 3 and 100 <= int(code) <= 599:
        assert parse_head(raw)[0] == int(code)
    else:  # "0", "99", "0200", "600", "99999", "": a protocol error, never a status
        with pytest.raises(httpx.RemoteProtocolError, match="malformed status line"):
            parse_head(raw)


@pytest.mark.parametrize(("raw", "message"), [
    (b"HTTP/1.1 2x0 OK", "malformed status line"),
    (b"HTTP/1.1 0 OK", "malformed status line"),
    (b"HTTP/1.1 99999 OK", "malformed status line"),
    (b"HTTP/1.1 099 OK", "malformed status line"),
    (b"HTTP/1.1 600 OK", "malformed status line"),
    (b"HTTP/1.1 0200 OK", "malformed status line"),
    (b"HTTP/1.1 \xb2\xb3\xb9 OK", "malformed status line"),  # latin-1 digits are not digits
    (b"HTTP/1.1 200 OK\r\n Leading: space", "malformed header line"),
    (b"HTTP/1.1 200 OK\r\n: no name", "malformed header line"),
    (b"HTTP/1.1 200 OK\r\nName : x", "malformed header line"),
])
def test_parse_head_refusals(raw: bytes, message: str) -> None:
    from rondo.client.transports.http11_conn import parse_head

    with pytest.raises(httpx.RemoteProtocolError, match=message):
        parse_head(raw)


def test_a_short_answer_is_read_whole_with_its_head_and_its_connection_freed_at_once() -> None:
    async def go(pool: Http11Pool, url: str, opened: list[int]) -> None:
        first = await pool.post(url, {}, b"{}")
        assert first.whole == b"ok"
        # Not closed yet, but its connection is back in the pool: the next post reuses it.
        second = await pool.post(url, {}, b"{}")
        assert second.whole == b"ok" and len(opened) == 1
        assert await first.aread() == b"ok" and await second.aread() == b"ok"
        await first.aclose()
        await second.aclose()
        assert len(pool._idle[("http", "127.0.0.1", int(url.split(":")[2].split("/")[0]))]) == 1
        big = await pool.post(url, {}, b"{}", whole=1)  # over `whole`: streamed
        assert big.whole is None and await big.aread() == b"ok"
        await big.aclose()

    run_pool(answer(OK), go)


def test_bytes_past_the_answer_make_the_connection_unusable() -> None:
    async def go(client: httpx.AsyncClient, url: str, opened: list[int]) -> None:
        for _ in range(2):
            assert (await client.post(url, content=b"1")).content == b"ok"
        assert len(opened) == 2  # the first connection was not reused

    run(answer(OK + b"GARBAGE"), go)


def test_a_long_body_read_slowly_pauses_reading_and_arrives_whole() -> None:
    from rondo.client.transports import http11_conn

    size = 3 * http11_conn.HIGH + 17
    payload = bytes(range(256)) * (size // 256) + b"x" * (size % 256)

    async def go(pool: Http11Pool, url: str, opened: list[int]) -> None:
        response = await pool.post(url, {}, b"{}")  # over WHOLE: streamed
        conn = response.stream.conn  # type: ignore[attr-defined]
        deadline = asyncio.get_running_loop().time() + 5
        while len(conn.buf) <= http11_conn.HIGH:  # nobody reads: the buffer fills, then
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.01)
        assert conn._paused  # reading pauses
        got = bytearray()
        async for piece in response.aiter_raw():
            got += piece
            assert len(conn.buf) <= http11_conn.HIGH + 64 * 1024 * 4
        assert bytes(got) == payload
        await response.aclose()
        again = await pool.post(url, {}, b"{}")  # read to its end: the connection is kept
        assert len(await again.aread()) == size and len(opened) == 1
        await again.aclose()

    run_pool(answer(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (size, payload)), go)


def test_a_large_request_body_is_written_whole() -> None:
    seen: list[bytes] = []

    async def go(pool: Http11Pool, url: str, opened: list[int]) -> None:
        response = await pool.post(url, {}, b"a" * 5_000_000)
        assert response.whole == b"ok"

    run_pool(answer(OK, keep=False), go, seen)
    assert [len(request.partition(b"\r\n\r\n")[2]) for request in seen] == [5_000_000]


def test_a_repeated_head_is_parsed_once_and_each_answer_gets_its_own_headers() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        if n <= 3:
            writer.write(b"HTTP/1.1 200 OK\r\nX-Same: 1\r\nContent-Length: 2\r\n\r\nok")
        elif n == 4:  # long: never kept
            writer.write(b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 600 + b"\r\nContent-Length: 2\r\n\r\nok")
        else:  # a different length each time: the memo stays bounded
            body = b"x" * n
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        return True

    async def go(pool: Http11Pool, url: str, opened: list[int]) -> None:
        first = await pool.post(url, {}, b"{}")
        assert len(pool._heads) == 1
        first.headers["x-same"] = "changed"  # an answer's headers are its own
        for _ in range(2):
            again = await pool.post(url, {}, b"{}")
            assert dict(again.headers) == {"x-same": "1", "content-length": "2"}
            assert again.whole == b"ok"
        assert len(pool._heads) == 1
        long = await pool.post(url, {}, b"{}")
        assert long.headers["X-Long"] == "a" * 600 and len(pool._heads) == 1
        for n in range(5, 200):
            response = await pool.post(url, {}, b"{}")
            assert response.whole == b"x" * n
            assert len(pool._heads) <= 64

    run_pool(script, go)
