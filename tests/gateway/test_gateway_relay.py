"""What the proxy relays besides results: an upstream's log messages from a stdio upstream,
an upstream's cancellation of a question it asked, task status on a listen stream. Every message
the downstream client hears is checked against the official schema of its era."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

import rondo
from rondo.client import Client
from tests.helpers.wire_schema import validate

ERAS = ["2025-11-25", "2026-07-28"]
HELPERS = Path(__file__).resolve().parents[1] / "helpers"


def _noted(heard: list[Any], era: str, method: str) -> Any:
    def note(message: Any) -> None:
        if message.get("method") == method:
            validate({"jsonrpc": "2.0", **message}, era=era)
            heard.append(message["params"])
    return note


@pytest.mark.parametrize("upstream_era", ERAS)
@pytest.mark.parametrize("protocol", ERAS)
def test_a_stdio_upstreams_log_messages_reach_the_client_of_the_one_call_in_flight(
        protocol: str, upstream_era: str) -> None:
    front = rondo.proxy([sys.executable, str(HELPERS / "gateway_upstream.py")],
                        upstream_protocol=upstream_era, timeout=20.0)
    heard: list[Any] = []

    async def go() -> None:
        async with front.started(), Client(
                front, protocol=protocol, log_level="info",
                on_notification=_noted(heard, protocol, "notifications/message")) as client:
            assert (await client.call_tool("chatty")).text == "chatted"

    asyncio.run(go())
    # The upstream's process shares one stream for all calls: with one relayed call in flight
    # its log messages are that call's (debug is below the client's level: dropped).
    assert heard == [{"level": "info", "data": {"step": 1}, "logger": "chatty"},
                     {"level": "warning", "data": "careful"}]


async def in_flight(front: rondo.Server, count: int) -> None:
    """Poll, with a deadline, until the proxy has `count` relayed calls in flight upstream."""
    link = front.extensions["io.modelcontextprotocol/tasks"].link  # type: ignore[attr-defined]
    deadline = asyncio.get_running_loop().time() + 20
    while len(link.calls) != count:
        assert asyncio.get_running_loop().time() < deadline, "the call never went upstream"
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("upstream_era", ERAS)
def test_a_stdio_upstreams_log_message_never_reaches_another_calls_client(
        upstream_era: str) -> None:
    """Two calls in flight on one stdio upstream: a log message that either could have sent is
    dropped, never guessed. A 2026-07-28 upstream logs only for calls that asked, so a call
    that did not ask does not make the other's messages ambiguous."""
    front = rondo.proxy([sys.executable, str(HELPERS / "gateway_upstream.py")],
                        upstream_protocol=upstream_era, timeout=20.0)
    quiet: list[Any] = []
    loud: list[Any] = []
    tag = f"relay-logs/{upstream_era}"

    async def go() -> None:
        async with front.started(), \
                Client(front, protocol="2026-07-28", log_level="info",
                       on_notification=_noted(quiet, "2026-07-28", "notifications/message")
                       ) as waiting, \
                Client(front, protocol="2026-07-28", log_level="info",
                       on_notification=_noted(loud, "2026-07-28", "notifications/message")
                       ) as chatting, \
                Client(front, protocol="2026-07-28") as unasked:
            call = asyncio.ensure_future(waiting.call_tool("wait", {"tag": tag}))
            await in_flight(front, 1)
            assert (await chatting.call_tool("chatty")).text == "chatted"
            call.cancel()
            await asyncio.wait({call})
            assert loud == [] and quiet == []  # ambiguous: dropped on both
            # One call that asked, one that did not: on 2026-07-28 only the asker can have
            # sent it; on 2025-11-25 the session logs for both, so it stays ambiguous.
            other = asyncio.ensure_future(unasked.call_tool("wait", {"tag": tag + "/2"}))
            await in_flight(front, 1)
            assert (await chatting.call_tool("chatty")).text == "chatted"
            other.cancel()
            await asyncio.wait({other})

    asyncio.run(go())
    expected = [{"level": "info", "data": {"step": 1}, "logger": "chatty"},
                {"level": "warning", "data": "careful"}]
    assert loud == (expected if upstream_era == "2026-07-28" else [])
    assert quiet == []


def _answers(request: Any) -> Any:
    return {"action": "accept", "content": {"ok": True}}


@pytest.mark.parametrize("protocol", ERAS)
@pytest.mark.parametrize("mode", ["hold", "replay"])
def test_a_bridged_stdio_upstreams_log_messages_reach_the_client_of_the_round(
        mode: str, protocol: str) -> None:
    front = rondo.proxy([sys.executable, str(HELPERS / "bridge_upstream.py")],
                        upstream_protocol="2025-11-25", bridge=mode, timeout=20.0)
    heard: list[Any] = []

    async def go() -> None:
        async with front.started(), Client(
                front, protocol=protocol, log_level="info", on_elicit=_answers,
                on_notification=_noted(heard, protocol, "notifications/message")) as client:
            assert (await client.call_tool("chatty")).text == "chatted"

    asyncio.run(go())
    # Replay re-runs the tool from the top on the answering round: its first message again.
    assert [note["data"] for note in heard] == (
        ["before the question", "answered True"] if mode == "hold"
        else ["before the question", "before the question", "answered True"])


@pytest.fixture(scope="module")
def bridged() -> Any:
    from tests.helpers.bridge_upstream import bridge_upstream
    from tests.helpers.gateway_upstream import served

    with served(bridge_upstream().asgi()) as (url, _):
        yield url


def test_an_upstream_that_gives_up_on_its_question_ends_a_legacy_clients_question(
        bridged: str) -> None:
    """A 2025-11-25 upstream cancels the `elicitation/create` it sent (it stopped waiting): the
    proxy's own `elicitation/create` to a 2025-11-25 client is cancelled too, so the client
    learns (`notifications/cancelled` naming the proxy's request) and the call completes
    without its answer."""
    front = rondo.proxy(bridged, upstream_protocol="2025-11-25", bridge="hold", timeout=10.0)
    heard: list[Any] = []
    asked: list[Any] = []
    ended: list[str] = []

    async def never(request: Any) -> Any:
        asked.append(request)
        try:
            await asyncio.sleep(30)  # a user who does not answer
        except asyncio.CancelledError:
            ended.append("cancelled")  # the client stopped asking its user
            raise
        return {"action": "decline"}

    async def go() -> None:
        async with front.started(), Client(
                front, protocol="2025-11-25", on_elicit=never,
                on_notification=_noted(heard, "2025-11-25", "notifications/cancelled")) as c:
            done = await asyncio.wait_for(c.call_tool("impatient"), 15)
            assert done.text == "gave up waiting"

    asyncio.run(go())
    assert len(asked) == 1
    assert len(heard) == 1 and isinstance(heard[0]["requestId"], int | str)
    assert ended == ["cancelled"]


def test_a_held_round_whose_question_the_upstream_withdrew_ends_cleanly(bridged: str) -> None:
    """A 2026-07-28 client holds the round that asks; the upstream gives up on the question
    meanwhile and asks another. The retry's next round asks only the new question, not the
    withdrawn one again, and the call completes."""
    from rondo.client import PendingCall

    front = rondo.proxy(bridged, upstream_protocol="2025-11-25", bridge="hold", timeout=10.0)
    link = front.extensions["io.modelcontextprotocol/tasks"].link  # type: ignore[attr-defined]

    async def go() -> None:
        async with front.started(), Client(front, protocol="2026-07-28",
                                           on_elicit=_answers) as c:
            pending = await c.call_tool("fickle", manual=True)
            assert isinstance(pending, PendingCall) and list(pending.input_requests) == ["sure"]
            deadline = asyncio.get_running_loop().time() + 10
            while True:  # the upstream gives up on `sure` and asks `day`
                open_keys = [key for flow in link.bridge.held.values() for key in flow.open]
                if open_keys == ["day"]:
                    break
                assert asyncio.get_running_loop().time() < deadline, open_keys
                await asyncio.sleep(0.02)
            again = await asyncio.wait_for(c.resume(pending, {}, manual=True), 15)
            assert isinstance(again, PendingCall) and list(again.input_requests) == ["day"]
            validate({"jsonrpc": "2.0", "id": 1, "result": {
                "resultType": "input_required", "inputRequests": again.input_requests,
                "requestState": again.request_state}}, era="2026-07-28", method="tools/call")
            done = await asyncio.wait_for(c.resume(again, {"day": {
                "action": "accept", "content": {"day": "Monday"}}}), 15)
            assert done.text == "changed its mind: Monday"

    asyncio.run(go())
