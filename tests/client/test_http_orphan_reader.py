"""`HttpTransport._answer_or_orphan` (2025-11-25 wire: an answer may come on the standalone GET
stream instead of its POST's own): the reader of the POST's stream never outlives the request,
whether the GET stream answered first or the request was cancelled meanwhile (left running, it
would read a response its request closes, and fail with nobody to see it)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rondo.client.transports.http import HttpTransport


def legacy_transport() -> HttpTransport:
    transport = HttpTransport("http://127.0.0.1:9/mcp")
    transport.session_id = "session-1"  # a 2025-11-25 session: answers may come on GET
    return transport


async def never_answered(stream: asyncio.Future[None], ended: asyncio.Event) -> Any:
    try:
        await stream  # the POST stream, held open by the loop as a socket is, never answers
    finally:
        ended.set()


def test_an_answer_from_the_get_stream_ends_the_post_streams_reader() -> None:
    async def main() -> tuple[Any, bool, bool]:
        transport = legacy_transport()
        ended, stream = asyncio.Event(), asyncio.get_running_loop().create_future()
        asking = asyncio.ensure_future(transport._answer_or_orphan(never_answered(stream, ended), 7))
        while 7 not in transport._waiting:  # bounded: it registers before its first wait
            await asyncio.sleep(0)
        transport._waiting[7].set_result({"jsonrpc": "2.0", "id": 7, "result": {}})
        answer = await asyncio.wait_for(asking, 5)
        await asyncio.wait_for(ended.wait(), 5)  # the reader was cancelled, not left reading
        return answer, ended.is_set(), 7 in transport._waiting

    answer, reader_ended, still_waiting = asyncio.run(main())
    assert answer == {"jsonrpc": "2.0", "id": 7, "result": {}}
    assert reader_ended and not still_waiting


def test_a_cancelled_request_ends_its_post_streams_reader() -> None:
    async def main() -> tuple[bool, bool]:
        transport = legacy_transport()
        ended, stream = asyncio.Event(), asyncio.get_running_loop().create_future()
        asking = asyncio.ensure_future(transport._answer_or_orphan(never_answered(stream, ended), 8))
        while 8 not in transport._waiting:
            await asyncio.sleep(0)
        asking.cancel()
        with pytest.raises(asyncio.CancelledError, match="^$"):  # our cancel(), no message
            await asking
        await asyncio.wait_for(ended.wait(), 5)
        return ended.is_set(), 8 in transport._waiting

    reader_ended, still_waiting = asyncio.run(main())
    assert reader_ended and not still_waiting
