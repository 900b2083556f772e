"""gateway/bridge/forward.py without Redis: what a process does with what arrives on its
bridge channel (a fake bridge and a fake Redis that records what is published)."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rondo.client.types import CallToolResult
from rondo.gateway.bridge.forward import MAX_MESSAGE, Forwarder, channel
from rondo.mrtr.result import InputRequired
from rondo.wire.errors import McpError


class FakeLink:
    identity = "up"
    timeout = 0.2


class FakeBridge:
    worker = "me"
    link = FakeLink()

    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome
        self.seen: list[tuple[Any, str]] = []

    async def relay(self, ctx: Any, method: str, params: Any) -> Any:
        self.seen.append((ctx, method))
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


class FakeRedis:
    def __init__(self, listening: int = 1) -> None:
        self.listening = listening
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def publish(self, name: str, data: bytes) -> int:
        self.sent.append((name, msgspec.json.decode(data)))
        return self.listening


def forwarder(outcome: Any = None, listening: int = 1) -> tuple[Forwarder, FakeBridge, FakeRedis]:
    bridge = FakeBridge(outcome)
    made = Forwarder(bridge, "redis://127.0.0.1:1/0")  # type: ignore[arg-type]
    redis = FakeRedis(listening)
    made._redis = redis
    return made, bridge, redis


def question(**extra: Any) -> bytes:
    return msgspec.json.encode({"t": "q", "id": "r1", "from": "asker", "m": "tools/call",
                                "s": {"w": "me", "f": "x", "r": 1},
                                "i": {"day": {"action": "accept"}}, "c": {"elicitation": {}},
                                **extra})


async def _served(made: Forwarder, data: Any) -> None:
    made.receive(data)
    await asyncio.gather(*list(made._serving))


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.binary(max_size=200), st.text(max_size=50), st.none(), st.integers(),
                 st.builds(lambda v: msgspec.json.encode(v),
                           st.recursive(st.none() | st.booleans() | st.text(max_size=8),
                                        lambda c: st.lists(c, max_size=3)
                                        | st.dictionaries(st.text(max_size=4), c, max_size=3),
                                        max_leaves=8))))
def test_anything_but_a_well_formed_message_is_dropped(data: Any) -> None:
    async def go() -> None:
        made, bridge, redis = forwarder()
        made.receive(data)
        assert not made._serving and not bridge.seen and not redis.sent

    asyncio.run(go())


def test_an_oversized_message_is_dropped() -> None:
    async def go() -> None:
        made, bridge, _ = forwarder()
        made.receive(question(pad="x" * MAX_MESSAGE))
        assert not made._serving and not bridge.seen

    asyncio.run(go())


@pytest.mark.parametrize("outcome, reply", [
    (CallToolResult(content=[{"type": "text", "text": "done"}]),
     {"ok": {"content": [{"type": "text", "text": "done"}], "isError": False}}),
    (InputRequired({"time": {"method": "elicitation/create", "params": {}}}, state={"r": 2}),
     {"ir": {"r": {"time": {"method": "elicitation/create", "params": {}}}, "s": {"r": 2}}}),
    (McpError(-32602, "Invalid requestState: ended", None),
     {"e": {"code": -32602, "message": "Invalid requestState: ended", "data": None}}),
    (RuntimeError("secret internal detail"),
     {"e": {"code": -32603, "message": "upstream unavailable"}}),
])
def test_a_forwarded_retry_is_resumed_and_answered_on_the_askers_channel(
        outcome: Any, reply: dict[str, Any]) -> None:
    async def go() -> None:
        made, bridge, redis = forwarder(outcome)
        await _served(made, question())
        (ctx, method), = bridge.seen
        assert method == "tools/call"
        assert ctx.state == {"w": "me", "f": "x", "r": 1}
        assert ctx.input_responses == {"day": {"action": "accept"}}
        assert ctx.client_capabilities == {"elicitation": {}}
        (name, sent), = redis.sent
        assert name == channel("asker")
        got = {k: v for k, v in sent.items() if k not in ("t", "id")}
        if "ok" in reply:
            assert got["ok"]["content"] == reply["ok"]["content"]
        else:
            assert got == reply
        assert sent["t"] == "a" and sent["id"] == "r1"

    asyncio.run(go())


def test_forward_round_trips_each_outcome_and_bounds_the_wait() -> None:
    async def go() -> None:
        made, _, redis = forwarder()

        class Retry:
            input_responses = {"day": {"action": "accept"}}
            client_capabilities: dict[str, Any] = {}

        async def answer(reply: dict[str, Any]) -> Any:
            task = asyncio.ensure_future(made.forward(Retry(), "tools/call", {"w": "holder"}))
            while not redis.sent:
                await asyncio.sleep(0.001)
            name, sent = redis.sent.pop()
            assert name == channel("holder") and sent["from"] == "me"
            made.receive(msgspec.json.encode({"t": "a", "id": sent["id"], **reply}))
            return await task

        done = await answer({"ok": {"content": [{"type": "text", "text": "hi"}]}})
        assert isinstance(done, CallToolResult) and done.text == "hi"
        more = await answer({"ir": {"r": {"k": {"method": "roots/list"}}, "s": {"r": 2}}})
        assert isinstance(more, InputRequired) and more.state == {"r": 2}
        with pytest.raises(McpError, match="^ended$"):
            await answer({"e": {"code": -32602, "message": "ended"}})
        # Nobody answers: -32602 after the bound (the fake link's 0.2 s timeout + 2 s).
        with pytest.raises(McpError, match=r"did not answer within 2\.2 s") as caught:
            await made.forward(Retry(), "tools/call", {"w": "holder"})
        assert caught.value.code == -32602
        assert not made._waiting
        # Nobody listening on the holder's channel: -32602 at once.
        redis.listening = 0
        with pytest.raises(McpError, match="is gone"):
            await made.forward(Retry(), "tools/call", {"w": "holder"})

    asyncio.run(go())
