"""One socket write per fixed-length answer under `serve()`'s httptools protocol (coalesce.py).

Two levels: `CoalescingTransport` against a recording transport and a stand-in cycle (order and
completeness of the bytes for any sequence of writes, by hypothesis), and uvicorn's real
httptools protocol, as `serve()` configures it, driven in process with a recording transport:
a JSON answer leaves in one write, a streamed answer's head leaves before its body exists.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import rondo
from rondo.transport.http import HttpApp
from rondo.transport.serve.coalesce import CoalescingTransport
from tests.helpers.polling import until


class Recorder:
    """A transport that records every call made on it."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.calls: list[str] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        assert not self.closed, "write after close"
        self.writes.append(bytes(data))
        self.calls.append("write")

    def writelines(self, data: Any) -> None:
        self.writes.append(b"".join(data))
        self.calls.append("writelines")

    def close(self) -> None:
        self.closed = True
        self.calls.append("close")

    def abort(self) -> None:
        self.closed = True
        self.calls.append("abort")

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 5000), "sockname": ("127.0.0.1", 8000)}.get(name, default)

    def pause_reading(self) -> None:
        self.calls.append("pause_reading")

    def resume_reading(self) -> None:
        self.calls.append("resume_reading")


class Cycle:
    def __init__(self, length: int | None) -> None:
        self.response_started = False
        self.chunked_encoding = None if length is None else False
        self.expected_content_length = 0 if length is None else length


class Protocol:
    cycle: Any = None


def wrapped() -> tuple[CoalescingTransport, Recorder, Protocol]:
    real, protocol = Recorder(), Protocol()
    return CoalescingTransport(real, protocol), real, protocol


def test_the_head_of_a_fixed_length_answer_leaves_with_its_body() -> None:
    transport, real, protocol = wrapped()
    protocol.cycle = Cycle(length=4)
    protocol.cycle.response_started = True
    transport.write(b"HEAD")
    assert real.writes == []
    transport.write(b"body")
    assert real.writes == [b"HEADbody"]
    transport.write(b"more")  # not a head: straight through
    assert real.writes == [b"HEADbody", b"more"]


def test_streamed_answers_empty_bodies_and_100_continue_are_not_held() -> None:
    transport, real, protocol = wrapped()
    protocol.cycle = Cycle(length=None)  # chunked: its head must reach the client at once
    transport.write(b"100 Continue")  # before the response starts
    protocol.cycle.response_started = True
    transport.write(b"SSE HEAD")
    assert real.writes == [b"100 Continue", b"SSE HEAD"]
    protocol.cycle = Cycle(length=0)  # e.g. 202 with content-length: 0
    protocol.cycle.response_started = True
    transport.write(b"EMPTY HEAD")
    assert real.writes[-1] == b"EMPTY HEAD"


def test_close_writelines_and_abort() -> None:
    transport, real, protocol = wrapped()
    protocol.cycle = Cycle(length=10)
    protocol.cycle.response_started = True
    transport.write(b"HEAD")
    transport.close()  # an app that stopped half way: what was written still goes first
    assert real.calls == ["write", "close"] and real.writes == [b"HEAD"]

    transport, real, protocol = wrapped()
    protocol.cycle = Cycle(length=10)
    protocol.cycle.response_started = True
    transport.write(b"HEAD")
    transport.writelines([b"a", b"b"])
    assert real.writes == [b"HEAD", b"ab"]

    transport, real, protocol = wrapped()
    protocol.cycle = Cycle(length=10)
    protocol.cycle.response_started = True
    transport.write(b"HEAD")
    transport.abort()
    transport.flush()
    assert real.writes == [] and real.calls == ["abort"]


def test_a_large_body_is_not_copied_behind_the_head() -> None:
    transport, real, protocol = wrapped()
    protocol.cycle = Cycle(length=1 << 20)
    protocol.cycle.response_started = True
    transport.write(b"HEAD")
    transport.write(b"x" * (1 << 20))
    assert real.calls == ["writelines"] and real.writes == [b"HEAD" + b"x" * (1 << 20)]


@pytest.mark.parametrize("kind", [bytearray, memoryview])
def test_a_body_in_another_buffer_type_still_follows_its_head(kind: Any) -> None:
    transport, real, protocol = wrapped()
    protocol.cycle = Cycle(length=4)
    protocol.cycle.response_started = True
    transport.write(b"HEAD")
    transport.write(kind(b"body"))
    assert real.calls == ["writelines"] and real.writes == [b"HEADbody"]


@pytest.mark.parametrize("kind", [bytearray, memoryview])
def test_a_head_in_another_buffer_type_is_held_and_joined_too(kind: Any) -> None:
    # Found by the order-and-completeness test below: a held memoryview head cannot be `+`-ed.
    transport, real, protocol = wrapped()
    protocol.cycle = Cycle(length=4)
    protocol.cycle.response_started = True
    transport.write(kind(b"HEAD"))
    assert real.writes == []
    transport.write(b"body")
    assert real.calls == ["writelines"] and real.writes == [b"HEADbody"]


def test_everything_else_is_the_real_transports() -> None:
    transport, real, _ = wrapped()
    assert transport.get_extra_info("peername") == ("127.0.0.1", 5000)
    transport.pause_reading()
    assert real.calls == ["pause_reading"]
    assert transport.is_closing() is False


# One step: ("cycle", length or None) starts a new response, "start" marks it started,
# ("write", data), ("writelines", parts), "close".
steps = st.lists(st.one_of(
    st.tuples(st.just("cycle"), st.one_of(st.none(), st.integers(0, 5))),
    st.just(("start", None)),
    st.tuples(st.just("write"), st.binary(max_size=8)),
    st.tuples(st.just("write"), st.binary(max_size=8).map(bytearray)),
    st.tuples(st.just("write"), st.binary(max_size=8).map(memoryview)),
    st.tuples(st.just("writelines"), st.lists(st.binary(max_size=4), max_size=3)),
    st.just(("close", None)),
), max_size=30)


@given(steps)
def test_bytes_keep_their_order_and_none_are_lost(ops: list[tuple[str, Any]]) -> None:
    transport, real, protocol = wrapped()
    expected = b""
    closed = False
    for op, arg in ops:
        if closed:
            break
        if op == "cycle":
            protocol.cycle = Cycle(arg)
        elif op == "start" and protocol.cycle is not None:
            protocol.cycle.response_started = True
        elif op == "write":
            transport.write(arg)
            expected += bytes(arg)
        elif op == "writelines":
            transport.writelines(arg)
            expected += b"".join(arg)
        elif op == "close":
            transport.close()
            closed = True
        # At most one write is held back, and only a response's head.
        assert b"".join(real.writes) == expected[: len(b"".join(real.writes))]
    transport.flush()
    assert b"".join(real.writes) == expected


# -- uvicorn's httptools protocol as serve() configures it, in process -------------------------

def protocol_for(app: Any, loop: Any, parser: str = "httptools", limits: Any = None,
                 **options: Any) -> Any:
    """The protocol `serve()` builds, for `app`; `options` are more `uvicorn.Config` ones."""
    import uvicorn
    from uvicorn.server import ServerState

    from rondo.transport.serve.limits import HttpLimits, guarded_protocol

    config = uvicorn.Config(app, log_level="error", lifespan="off", proxy_headers=False,
                            server_header=False, date_header=False, **options)
    config.load()
    cls = guarded_protocol(parser, limits or HttpLimits())
    return cls(config=config, server_state=ServerState(), app_state={}, _loop=loop)


def post(body: bytes, name: str) -> bytes:
    return (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
            b"Mcp-Method: tools/call\r\nMcp-Name: " + name.encode() + b"\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body) + body)


def call(name: str, arguments: dict[str, Any]) -> bytes:
    import json

    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": name, "arguments": arguments, "_meta": {
            "progressToken": "p1",
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()


def make_app() -> tuple[HttpApp, asyncio.Event]:
    server = rondo.Server("coalesce", state=None)
    release = asyncio.Event()

    @server.tool
    def add(a: int, b: int) -> str:
        """Add."""
        return str(a + b)

    @server.tool
    async def slow(ctx: rondo.Context) -> str:
        """Report progress, then wait to be released."""
        await ctx.report_progress(1, 2, "started")
        await release.wait()
        return "done"

    return HttpApp(server), release


def connected(parser: str = "httptools", limits: Any = None,
              loop: Any = None) -> tuple[Any, Recorder, asyncio.Event]:
    """uvicorn's protocol for a fresh app, as `serve()` builds it, on a recording transport
    (call inside the running loop, or pass a stand-in for it); also the event that releases
    the app's `slow` tool."""
    app, release = make_app()
    real = Recorder()
    protocol = protocol_for(app, loop or asyncio.get_running_loop(), parser, limits)
    protocol.connection_made(real)
    return protocol, real, release


def test_a_json_answer_leaves_in_one_write_and_keep_alive_goes_on() -> None:
    async def main() -> None:
        protocol, real, _ = connected()
        for a in range(3):  # on one kept connection
            protocol.data_received(post(call("add", {"a": a, "b": 2}), "add"))
            await until(lambda n=a + 1: len(real.writes) == n and protocol.cycle.response_complete)
            head, _, body = real.writes[a].partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200 OK")
            assert b'"text":"%d"' % (a + 2) in body
            assert int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0]) == len(body)
        assert real.calls == ["write"] * 3
        protocol.connection_lost(None)

    asyncio.run(main())


def test_a_streamed_answers_head_and_first_event_leave_before_it_ends() -> None:
    async def main() -> None:
        protocol, real, release = connected()
        protocol.data_received(post(call("slow", {}), "slow"))
        await until(lambda: b"started" in b"".join(real.writes))
        assert b"".join(real.writes).startswith(b"HTTP/1.1 200 OK")
        assert b"text/event-stream" in real.writes[0]
        assert not protocol.cycle.response_complete
        release.set()
        await until(lambda: protocol.cycle.response_complete)
        assert b"done" in real.writes[-1]
        protocol.connection_lost(None)

    asyncio.run(main())


@pytest.mark.parametrize("parser", ["httptools", "h11"])
def test_only_httptools_writes_through_the_coalescer(parser: str) -> None:
    async def main() -> None:
        protocol, real, _ = connected(parser)
        if parser == "httptools":
            assert isinstance(protocol.transport, CoalescingTransport)
        else:
            assert protocol.transport is real  # h11 keeps uvicorn's writes as they are
        protocol.connection_lost(None)

    asyncio.run(main())


def test_a_head_answer_leaves_when_its_response_completes() -> None:
    # A HEAD answer has a content length and no body write: the held head must not wait for a
    # body (it waited for the keep-alive timeout's close, 5 s, before issue 37 defect 14).
    async def main() -> None:
        protocol, real, _ = connected()
        protocol.data_received(b"HEAD /mcp HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n\r\n")
        await until(lambda: protocol.cycle is not None and protocol.cycle.response_complete)
        assert real.calls == ["write"]  # without a flush by hand, before any timeout
        head = real.writes[0]
        assert head.startswith(b"HTTP/1.1 405 ") and head.endswith(b"\r\n\r\n")
        assert b"content-length: 18" in head.lower()
        protocol.data_received(post(call("add", {"a": 1, "b": 1}), "add"))  # keep-alive goes on
        await until(lambda: len(real.writes) == 2 and protocol.cycle.response_complete)
        assert b'"text":"2"' in real.writes[1]
        protocol.connection_lost(None)

    asyncio.run(main())
