"""Issue 16 items 6 and 8: listen streams and chatty SSE answers to clients that never read."""

from __future__ import annotations

import asyncio
import time
import tracemalloc
from typing import Any

import msgspec
import pytest

import rondo
from rondo.core.subscriptions import FANOUT_SLICE, Listener, Subscriptions
from rondo.transport.http import HttpApp
from rondo.transport.memory import MemoryConnection
from tests.helpers.helpers_core import http_headers, request
from tests.helpers.polling import until


class NeverReads:
    """One ASGI request whose client sends the body and then never reads a byte: every body
    frame after the first blocks, as it does when the socket's buffers are full."""

    def __init__(self, app: Any, message: dict[str, Any]) -> None:
        headers = [(b"host", b"127.0.0.1")] + [
            (k.encode(), v.encode()) for k, v in http_headers(message).items()]
        self.scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
        self.body = msgspec.json.encode(message)
        self.frames = 0
        self.stuck = asyncio.Event()
        self.task = asyncio.ensure_future(app(self.scope, self._receive, self._send))

    async def _receive(self) -> dict[str, Any]:
        if self.body is not None:
            body, self.body = self.body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def _send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            self.frames += 1
            if self.frames > 1:
                self.stuck.set()
                await asyncio.Event().wait()


def listen_message(rid: int) -> dict[str, Any]:
    return request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=rid)


def peak_of(coro: Any) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        result = asyncio.run(asyncio.wait_for(coro, 60))
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def listen_server() -> rondo.Server:
    server = rondo.Server("listen", state=None)

    @server.tool
    def x() -> str:
        """A tool, so tools.listChanged is advertised."""
        return "x"

    @server.resource("file:///r/{name}")
    def r(name: str) -> str:
        return name

    return server


def resource_listen(rid: int) -> dict[str, Any]:
    return request("subscriptions/listen", {"notifications": {
        "toolsListChanged": True, "resourceSubscriptions": ["file:///r"]}}, id=rid)


@pytest.mark.parametrize("kind", ["list_changed", "resource_updated"])
def test_unread_listen_streams_stay_bounded(kind: str) -> None:
    server = listen_server()
    app = HttpApp(server, max_pending=256)

    async def go() -> int:
        streams = [NeverReads(app, resource_listen(i)) for i in range(10)]
        deadline = time.monotonic() + 10
        while len(server.core.subscriptions) < 10:  # polled with a deadline, not slept on
            assert time.monotonic() < deadline, len(server.core.subscriptions)
            await asyncio.sleep(0.01)
        assert len(server.core.subscriptions) == 10
        for i in range(60_000):
            if kind == "list_changed":
                server.notify_tools_changed()
            else:
                server.notify_resource_updated(f"file:///r/{i}")
            if i % 1000 == 0:
                await asyncio.sleep(0)
        if kind == "list_changed":
            await asyncio.sleep(0.05)  # room for a wrong drop to show; the right answer is 10 at any time
        else:  # an overflowing stream is cancelled at once and leaves the fan-out as it ends
            await until(lambda: not server.core.subscriptions, 5, "the slow readers stayed")
        left = len(server.core.subscriptions)
        for s in streams:
            s.task.cancel()
        await asyncio.gather(*(s.task for s in streams), return_exceptions=True)
        return left

    left, peak = peak_of(go())
    # Repeated list changes merge into the one still pending: the stream stays, costing nothing.
    # Distinct updates cannot merge: the slow reader is dropped from the fan-out.
    assert left == (10 if kind == "list_changed" else 0)
    # Before: 10 unread streams and 60,000 events took RSS from 33 to 272 MB.
    assert peak < 20 * 1024 * 1024, f"peak {peak / 1e6:.1f} MB"


def test_a_chatty_answer_to_a_client_that_never_reads_is_bounded() -> None:
    server = rondo.Server("chatty", state=None)
    sent = {"n": 0, "cancelled": False}

    @server.tool
    async def chatty(ctx: rondo.Context) -> str:
        """200,000 1 KB log lines."""
        try:
            for _ in range(200_000):
                sent["n"] += 1
                await ctx.log("info", "x" * 1000)
                if sent["n"] % 500 == 0:
                    await asyncio.sleep(0)
        except asyncio.CancelledError:
            sent["cancelled"] = True
            raise
        return "done"

    app = HttpApp(server, max_pending=512)

    async def go() -> None:
        msg = request("tools/call", {"name": "chatty", "arguments": {}}, id=1,
                      meta_extra={"io.modelcontextprotocol/logLevel": "debug"})
        stream = NeverReads(app, msg)
        await asyncio.wait_for(stream.stuck.wait(), 10)
        for _ in range(200):
            if sent["cancelled"]:
                break
            await asyncio.sleep(0.01)
        stream.task.cancel()
        await asyncio.gather(stream.task, return_exceptions=True)

    _, peak = peak_of(go())
    assert sent["cancelled"] and sent["n"] < 200_000
    assert peak < 20 * 1024 * 1024, f"peak {peak / 1e6:.1f} MB"  # before: 115 MB


def test_listen_streams_are_capped_per_server_and_per_principal() -> None:
    subs = Subscriptions(max_streams=5, max_per_principal=2)
    emit = lambda note: None  # noqa: E731
    subs.add(Listener(1, frozenset(), (), emit, "alice"))
    subs.add(Listener(2, frozenset(), (), emit, "alice"))
    with pytest.raises(rondo.McpError, match="principal"):
        subs.add(Listener(3, frozenset(), (), emit, "alice"))
    anon = [Listener(i, frozenset(), (), emit) for i in range(3)]
    for listener in anon:
        subs.add(listener)
    with pytest.raises(rondo.McpError, match="server"):
        subs.add(Listener(9, frozenset(), (), emit, "bob"))
    subs.remove(anon[0])
    subs.add(Listener(9, frozenset(), (), emit, "bob"))
    with pytest.raises(ValueError, match="max_listen_streams must be a positive integer"):
        rondo.Server("bad", max_listen_streams=0)


def test_a_listen_beyond_the_cap_is_answered_with_an_error() -> None:
    server = rondo.Server("cap", state=None, max_listen_streams=2)

    @server.tool
    def x() -> str:
        """A tool."""
        return "x"

    async def go() -> dict[str, Any] | None:
        conn = MemoryConnection(server)
        tasks = [asyncio.ensure_future(conn.send(listen_message(i))) for i in (1, 2)]
        await until(lambda: len(server.core.subscriptions) == 2, 5, "the two streams never opened")
        third = await asyncio.wait_for(conn.send(listen_message(3)), 5)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return third

    third = asyncio.run(go())
    assert third is not None and third["error"]["code"] == -32000


def test_fan_out_to_many_listeners_does_not_block_the_loop() -> None:
    subs = Subscriptions(max_streams=10_000)
    got: list[int] = []
    for i in range(8000):
        subs.add(Listener(i, frozenset({"toolsListChanged"}), (), lambda note, i=i: got.append(i)))

    async def go() -> list[int]:
        """Listeners reached by the end of each event-loop turn, from the call on."""
        subs.list_changed("tools")
        reached = [len(got)]
        while len(got) < 8000 and len(reached) < 8000 // FANOUT_SLICE + 5:
            await asyncio.sleep(0)  # one turn of the loop: other work would run here
            reached.append(len(got))
        return reached

    reached = asyncio.run(go())
    assert len(got) == 8000 and got == sorted(got)  # everyone, in order
    # Counted in loop turns, not timed: at most one slice per turn. Before, all 8000 listeners
    # were sent to inside the call (0.4 s of loop blocked, 0.55 s over HTTP).
    per_turn = [b - a for a, b in zip([0, *reached], reached, strict=False)]
    assert reached[0] == FANOUT_SLICE and max(per_turn) <= FANOUT_SLICE, per_turn


def test_pending_notes_merge_what_supersedes_and_bound_the_rest() -> None:
    from rondo.transport.http.pending import HARD_FACTOR, PendingNotes

    def progress(token: Any, n: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": token, "progress": n}}

    log_line = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
    pending = PendingNotes(cap=4)
    for n in range(1000):
        assert pending.add(progress("a", n))
    assert pending.add(log_line) and pending.add(progress("b", 1))
    assert [(m["params"].get("progressToken"), m["params"].get("progress")) for m in pending.notes] == [
        ("a", 999), (None, None), ("b", 1)]
    pending.sending = True  # the client stopped reading: the cap applies
    assert pending.add(log_line)
    assert not pending.add(log_line) and pending.overflowed
    quick = PendingNotes(cap=4)  # nobody stuck writing yet: only the hard bound applies
    assert all(quick.add(log_line) for _ in range(4 * HARD_FACTOR))
    assert not quick.add(log_line)
