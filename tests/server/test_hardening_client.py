"""Issue 16 items 14-16: what a hostile server can make a client hold."""

from __future__ import annotations

import asyncio
import json
import re
import tracemalloc
from collections.abc import AsyncIterator
from typing import Any

import httpx
import msgspec
import pytest

from rondo.client.errors import InputRequiredError, ProtocolError
from rondo.client.loop import drive
from rondo.client.transports.http import HttpTransport
from rondo.client.transports.sse import SseParser, bounded_lines, events
from tests.helpers.helpers_core import request

URL = "http://127.0.0.1:9/mcp"


def transport(handler: Any, **options: Any) -> HttpTransport:
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return HttpTransport(URL, http_client=client, **options)


async def endless(chunk: bytes, first: bytes = b"", sent: list[int] | None = None) -> AsyncIterator[bytes]:
    """`first`, then `chunk` forever; `sent` (if given) counts the chunks the reader pulled."""
    if first:
        yield first
    while True:
        if sent is not None:
            sent.append(len(chunk))
        yield chunk
        await asyncio.sleep(0)


async def incoming(message: dict[str, Any]) -> None:
    return None


def run_capped(coro: Any) -> tuple[Any, int]:
    """Run `coro` under a 30 s hang guard; its result (or exception) and the peak Python memory it
    allocated."""
    tracemalloc.start()
    try:
        try:
            result: Any = asyncio.run(asyncio.wait_for(coro, 30))
        except Exception as exc:  # noqa: BLE001 - the caller checks which
            result = exc
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return result, peak


# -- 14. response and event sizes ---------------------------------------------------------------


@pytest.mark.parametrize(("ctype", "refusal"), [
    ("application/json", "server's answer exceeds 4194304 bytes"),
    ("text/event-stream", "server sent an SSE line longer than 4194304 bytes"),
])
def test_an_endless_answer_is_refused_at_the_cap(ctype: str, refusal: str) -> None:
    first = b'{"jsonrpc":"2.0","id":1,"result":{"x":"' if ctype == "application/json" else b"data: "
    sent: list[int] = []

    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": ctype},
                              content=endless(b"a" * 65536, first, sent))

    async def go() -> Any:
        t = transport(handler, max_response=4 << 20, max_event=4 << 20)
        await t.start(incoming)
        try:
            return await t.request(request("tools/list", id=1))
        finally:
            await t.close()

    result, peak = run_capped(go())
    assert isinstance(result, ProtocolError), result
    assert str(result) == refusal
    # Refused at the cap: the client pulled no more than the cap plus one read's worth of chunks.
    assert (4 << 20) <= sum(sent) <= (4 << 20) + 2 * 65536
    assert peak < 40 << 20


def test_a_declared_length_over_the_cap_is_refused_before_reading() -> None:
    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "application/json",
                                            "content-length": str(1 << 30)}, content=b"{}")

    async def go() -> Any:
        t = transport(handler, max_response=1 << 20)
        await t.start(incoming)
        return await t.request(request("tools/list", id=1))

    with pytest.raises(ProtocolError, match="limit"):
        asyncio.run(go())


def test_an_event_of_many_data_lines_is_capped_too() -> None:
    async def lines() -> AsyncIterator[str]:
        while True:
            yield "data: " + "a" * 1000

    async def go() -> None:
        async for _ in events(lines(), SseParser(max_event=100_000)):
            pass

    with pytest.raises(ProtocolError, match="larger"):
        asyncio.run(go())


def test_bounded_lines_splits_every_line_ending_across_chunks() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for part in (b"a\r", b"\nb\n", b"c\rd", b"\r\r\ne"):
            yield part

    async def go() -> list[str]:
        return [line async for line in bounded_lines(chunks(), 100)]

    assert asyncio.run(go()) == ["a", "b", "c", "d", "", "e"]


# -- 15. a flood of 2025-11-25 server requests --------------------------------------------------


def test_a_server_request_flood_is_capped_and_close_is_bounded() -> None:
    n = 3000
    replies: list[dict[str, Any]] = []
    frames = b"".join(
        b"data: " + msgspec.json.encode({"jsonrpc": "2.0", "id": f"s{i}", "method": "elicitation/create",
                                          "params": {"message": "?", "requestedSchema": {"type": "object"}}})
        + b"\n\n" for i in range(n))
    frames += b'data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n'

    def handler(req: httpx.Request) -> httpx.Response:
        body = json.loads(req.content)
        if "method" in body:  # the client's request: answer with the flood
            return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=frames)
        replies.append(body)
        return httpx.Response(202)

    running = {"now": 0, "peak": 0, "cancelled": 0}

    async def stuck(message: dict[str, Any]) -> dict[str, Any]:
        running["now"] += 1
        running["peak"] = max(running["peak"], running["now"])
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            running["cancelled"] += 1
            raise
        finally:
            running["now"] -= 1
        return {}

    async def go() -> int:
        t = transport(handler, max_server_requests=16)
        t.legacy_version = "2025-11-25"
        t.session_id = "s"
        await t.start(stuck)
        msg = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        answer = await t.request(msg)
        assert answer["result"] == {}
        parked = running["now"]
        await t.close()
        return parked

    # run_capped's 30 s guard fails the test if close waited on handlers that sleep an hour.
    parked, _peak = run_capped(go())
    assert not isinstance(parked, Exception), parked
    assert running["peak"] <= 16
    busy = [r for r in replies if "error" in r and "busy" in r["error"]["message"]]
    assert len(busy) == n - 16
    # close cancels the 16 parked handlers (each would sleep an hour) instead of waiting for them
    assert parked == 16 and running["cancelled"] == 16 and running["now"] == 0


# -- 16. questions per round --------------------------------------------------------------------


def test_a_round_with_too_many_questions_fails_before_any_handler_runs() -> None:
    read: list[str] = []

    class Question(dict[str, Any]):
        """A question that records every field read past the method every entry is checked for."""

        def get(self, key: str, default: Any = None) -> Any:
            if key != "method":
                read.append(key)
            return super().get(key, default)

        def __getitem__(self, key: str) -> Any:
            if key != "method":
                read.append(key)
            return super().__getitem__(key)

    ask = Question(method="elicitation/create",
                   params={"message": "?", "requestedSchema": {"type": "object"}})
    flood = {"resultType": "input_required", "inputRequests": {f"q{i}": ask for i in range(100_000)}}
    calls = []

    async def send(params: dict[str, Any]) -> dict[str, Any]:
        return flood

    async def answer(requests: dict[str, Any]) -> dict[str, Any]:
        calls.append(len(requests))
        return {}

    with pytest.raises(InputRequiredError, match=re.escape(
            "server asked 100000 questions in one round (cap 64, Client(max_input_requests=...))")) as info:
        asyncio.run(drive(send, {}, answer=answer, max_input_requests=64))
    assert info.value.reason == "too_many_requests"
    assert calls == [] and read == []  # no handler ran, no question was read past its method


def test_the_client_option_is_checked() -> None:
    import rondo

    with pytest.raises(ValueError, match="max_input_requests"):
        rondo.Client("http://127.0.0.1:9/mcp", max_input_requests=0)
