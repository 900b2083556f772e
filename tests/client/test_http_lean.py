"""`HttpTransport` on the lean pool (the proxy's upstream link): a 2026-07-28 request's header
lines are made once per (version, method, name, extra headers) and made again when the
transport's headers change; a short JSON answer is decoded as the pool read it; every other
answer (redirect, SSE, error status, another content type, an encoded body, one past
`max_response`) is read as the general path reads it. `Client.resume(raw=True)` gives the
result dict as sent. The deadline of a request (a timer handle) still ends it, and an outer
cancel is still a cancel."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from rondo.client import Client, ProtocolError, RequestTimeout, TransportError
from rondo.client.errors import HttpError
from rondo.client.transports.http import HttpTransport
from rondo.client.transports.http11 import Http11Pool
from rondo.client.types import CallToolResult, PendingCall
from tests.helpers.polling import until

V = "2026-07-28"
Reply = Callable[[dict[str, Any], bytes, int], Awaitable[bytes | None]]


async def read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return head, await reader.readexactly(length)


def answer(body: bytes, *, ctype: bytes = b"application/json", status: bytes = b"200 OK",
           extra: bytes = b"") -> bytes:
    return (b"HTTP/1.1 %s\r\nContent-Type: %s\r\n%sContent-Length: %d\r\n\r\n%s"
            % (status, ctype, extra, len(body), body))


def result_of(message: dict[str, Any], result: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()


ADD = {"content": [{"type": "text", "text": "3"}], "structuredContent": {"result": 3}}


def run(reply: Reply, go: Callable[[str, list[bytes]], Awaitable[None]]) -> None:
    """A raw server answering each POST with `reply(message, head, n)` (None: hang up)."""
    heads: list[bytes] = []

    async def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head, body = await read_request(reader)
                except (asyncio.IncompleteReadError, ConnectionError):
                    break
                heads.append(head)
                out = await reply(json.loads(body), head, len(heads))
                if out is None:
                    break
                writer.write(out)
                await writer.drain()
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(on_connection, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            await asyncio.wait_for(go(f"http://127.0.0.1:{port}/mcp", heads), 20)
        finally:
            server.close()

    asyncio.run(main())


def lean(url: str, **options: Any) -> HttpTransport:
    return HttpTransport(url, http_transport=Http11Pool(), **options)


def modern(rid: int, name: str = "add") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": name, "arguments": {}, "_meta": {
                "io.modelcontextprotocol/protocolVersion": V}}}


async def ignore(_: Any) -> None:
    return None


def test_header_lines_are_kept_per_name_and_made_again_when_the_headers_change() -> None:
    async def reply(message: dict[str, Any], head: bytes, n: int) -> bytes:
        return answer(result_of(message, ADD))

    async def go(url: str, heads: list[bytes]) -> None:
        transport = lean(url, headers={"X-Team": "a"})
        await transport.start(ignore)
        try:
            for rid, name in ((1, "add"), (2, "add"), (3, "other")):
                got = await transport.request(modern(rid, name), None)
                assert got["result"] == ADD and got["id"] == rid
            await transport.request(modern(4), {"Mcp-Param-X": "1"})
            assert len(transport._head_lines) == 3  # add, other, add with its param header
            transport.headers = {"X-Team": "b"}
            await transport.request(modern(5), None)
        finally:
            await transport.close()
        assert [b"Mcp-Name: add" in h for h in heads] == [True, True, False, True, True]
        assert b"Mcp-Name: other" in heads[2] and b"Mcp-Param-X: 1" in heads[3]
        assert all(b"X-Team: a" in h for h in heads[:4]) and b"X-Team: b" in heads[4]
        assert all(b"MCP-Protocol-Version: " + V.encode() in h for h in heads)

    run(reply, go)


@pytest.mark.parametrize("kind", ["sse", "text-type", "gzip", "redirect", "long"])
def test_answers_off_the_short_json_path_are_read_as_before(kind: str) -> None:
    async def reply(message: dict[str, Any], head: bytes, n: int) -> bytes:
        body = result_of(message, ADD)
        if kind == "sse":
            event = b"event: message\r\ndata: " + body + b"\r\n\r\n"
            return (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                    b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(event), event))
        if kind == "text-type":
            return answer(body, ctype=b"text/plain")
        if kind == "gzip":
            return answer(gzip.compress(body), extra=b"Content-Encoding: gzip\r\n")
        if kind == "redirect" and head.startswith(b"POST /mcp "):
            return (b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /mcp/\r\n"
                    b"Content-Length: 0\r\n\r\n")
        if kind == "long":
            padded = {**ADD, "pad": "x" * 70_000}  # past the pool's WHOLE: streamed
            return answer(result_of(message, padded))
        return answer(body)

    async def go(url: str, heads: list[bytes]) -> None:
        transport = lean(url)
        await transport.start(ignore)
        try:
            for rid in (1, 2):
                got = await transport.request(modern(rid), None)
                assert got["id"] == rid and got["result"]["content"] == ADD["content"]
        finally:
            await transport.close()
        if kind == "redirect":  # followed once within the origin, then the new URL kept
            assert [h.split(b"\r\n")[0] for h in heads] == [
                b"POST /mcp HTTP/1.1", b"POST /mcp/ HTTP/1.1", b"POST /mcp/ HTTP/1.1"]

    run(reply, go)


@pytest.mark.parametrize(("reply_bytes", "error", "match"), [
    (answer(b'{"oops": 1}', status=b"500 Internal Server Error"), HttpError, "500"),
    (answer(b"not json"), ProtocolError, "malformed JSON"),
    (answer(b'{"jsonrpc": "2.0", "id": 99, "result": {}}'), ProtocolError, "answered id 99"),
    (answer(b'[1, 2]'), ProtocolError, "not a JSON-RPC response"),
    (answer(b"x" * 200, extra=b""), ProtocolError, "exceeds|is 2\\d\\d bytes|malformed"),
])
def test_bad_short_answers_are_the_errors_they_were(reply_bytes: bytes, error: type[Exception],
                                                    match: str) -> None:
    async def reply(message: dict[str, Any], head: bytes, n: int) -> bytes:
        return reply_bytes

    async def go(url: str, heads: list[bytes]) -> None:
        transport = lean(url, max_response=100 if b"x" * 200 in reply_bytes else 1 << 20)
        await transport.start(ignore)
        try:
            with pytest.raises(error, match=match):
                await transport.request(modern(1), None)
        finally:
            await transport.close()

    run(reply, go)


def test_an_upstream_that_hangs_up_is_a_transport_error() -> None:
    async def reply(message: dict[str, Any], head: bytes, n: int) -> None:
        return None

    async def go(url: str, heads: list[bytes]) -> None:
        transport = lean(url)
        await transport.start(ignore)
        try:
            with pytest.raises(TransportError, match="connection lost"):
                await transport.request(modern(1), None)
        finally:
            await transport.close()

    run(reply, go)


def test_resume_raw_gives_the_result_dict_and_the_deadline_still_ends_a_silent_call() -> None:
    silent = asyncio.Event()
    slow_asked: list[int] = []

    async def reply(message: dict[str, Any], head: bytes, n: int) -> bytes:
        if message["params"]["name"] == "slow":
            slow_asked.append(n)
            await silent.wait()
        return answer(result_of(message, {**ADD, "resultType": "complete"}))

    async def go(url: str, heads: list[bytes]) -> None:
        async with Client(lean(url), protocol=V, timeout=0.3, max_timeout=0.3) as client:
            client._tool_headers.update({"add": [], "slow": []})
            client._tools_listed = True
            call = PendingCall(method="tools/call", params={"name": "add", "arguments": {}})
            got = await client.resume(call, {}, manual=True, raw=True)
            assert got == {**ADD, "resultType": "complete"}
            typed = await client.resume(call, {}, manual=True)
            assert isinstance(typed, CallToolResult) and typed.structured_content == {"result": 3}
            slow = PendingCall(method="tools/call", params={"name": "slow", "arguments": {}})
            started = asyncio.get_running_loop().time()
            with pytest.raises(RequestTimeout, match=r"within 0\.3 s"):
                await client.resume(slow, {}, manual=True, raw=True)
            assert asyncio.get_running_loop().time() - started < 5
            # An outer cancel is a cancel, not a timeout, and the client still works after.
            waiting = asyncio.ensure_future(client.resume(slow, {}, manual=True))
            await until(lambda: len(slow_asked) == 2, 5, "the second slow call never arrived")
            waiting.cancel()  # in flight: the server holds it
            with pytest.raises(asyncio.CancelledError, match="^$"):  # our cancel(), given no message
                await waiting
            assert (await client.resume(call, {}, manual=True, raw=True))["content"] == ADD["content"]
            silent.set()

    run(reply, go)


def test_resume_manual_pauses_on_input_required_and_refuses_a_malformed_one() -> None:
    from rondo.client import InputRequiredError

    asked = {"resultType": "input_required", "requestState": "s1",
             "inputRequests": {"q": {"method": "elicitation/create", "params": {}}}}

    async def reply(message: dict[str, Any], head: bytes, n: int) -> bytes:
        if message["params"]["name"] == "bad":
            return answer(result_of(message, {"resultType": "input_required",
                                              "inputRequests": {"q": 5}}))
        return answer(result_of(message, asked))

    async def go(url: str, heads: list[bytes]) -> None:
        async with Client(lean(url), protocol=V) as client:
            client._tool_headers.update({"ask": [], "bad": []})
            client._tools_listed = True
            call = PendingCall(method="tools/call", params={"name": "ask", "arguments": {}},
                               rounds=2)
            paused = await client.resume(call, {}, manual=True, raw=True)
            assert isinstance(paused, PendingCall)
            assert paused.request_state == "s1" and paused.rounds == 3
            assert paused.input_requests == asked["inputRequests"]
            assert paused.params == call.params
            bad = PendingCall(method="tools/call", params={"name": "bad", "arguments": {}})
            with pytest.raises(InputRequiredError, match="malformed") as caught:
                await client.resume(bad, {}, manual=True)
            assert caught.value.rounds == 1

    run(reply, go)
