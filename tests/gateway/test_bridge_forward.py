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
from rondo.gateway.bridge.forward import MAX_MESSAGE, MAX_NOTES, Forwarder, channel
from rondo.mrtr.result import InputRequired
from rondo.wire.errors import McpError
from tests.helpers.polling import until


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


class Talker(FakeBridge):
    """Resumes the held call: the upstream logs at three levels and reports progress."""

    async def relay(self, ctx: Any, method: str, params: Any) -> Any:
        self.seen.append((ctx, method))
        ctx.log("debug", "too fine")
        ctx.log("info", {"step": 1}, "upstream")
        ctx.report_progress(1, 2, "half")
        ctx.log("warning", "careful")
        return self.outcome


@pytest.mark.parametrize("asked", [True, False])
def test_a_forwarded_rounds_progress_and_log_messages_go_to_the_asker_before_the_answer(
        asked: bool) -> None:
    async def go() -> None:
        bridge = Talker(CallToolResult(content=[{"type": "text", "text": "done"}]))
        made = Forwarder(bridge, "redis://127.0.0.1:1/0")  # type: ignore[arg-type]
        redis = FakeRedis()
        made._redis = redis
        extra = {"l": "info", "p": True} if asked else {}
        await _served(made, question(**extra))
        sent = [message for _, message in redis.sent]
        assert all(name == channel("asker") for name, _ in redis.sent)
        assert sent[-1]["t"] == "a" and sent[-1]["id"] == "r1"
        notes = [message["n"] for message in sent[:-1]]
        assert all(message["t"] == "n" and message["id"] == "r1" for message in sent[:-1])
        # At the level the retry asked for, in order, progress only with a token; nothing
        # for a retry that asked for neither.
        assert notes == ([{"k": "log", "level": "info", "data": {"step": 1}, "logger": "upstream"},
                          {"k": "progress", "done": 1, "total": 2, "message": "half"},
                          {"k": "log", "level": "warning", "data": "careful", "logger": None}]
                         if asked else [])

    asyncio.run(go())


def test_the_asker_passes_the_holders_messages_to_its_client_then_the_answer() -> None:
    async def go() -> None:
        made, _, redis = forwarder()
        heard: list[Any] = []

        class Retry:
            input_responses = {"day": {"action": "accept"}}
            client_capabilities: dict[str, Any] = {}
            log_level = "info"
            request_params = {"_meta": {"progressToken": 7}}

            def log(self, level: str, data: Any, logger: str | None = None) -> None:
                heard.append(("log", level, data, logger))

            def report_progress(self, done: float, total: float | None = None,
                                message: str | None = None) -> None:
                heard.append(("progress", done, total, message))

        task = asyncio.ensure_future(made.forward(Retry(), "tools/call", {"w": "holder"}))
        await until(lambda: redis.sent, 5, "the retry was never published")
        _, sent = redis.sent.pop()
        assert sent["l"] == "info" and sent["p"] is True
        for note in ({"k": "log", "level": "info", "data": "hi", "logger": "up"},
                     {"k": "progress", "done": 1, "total": None, "message": None},
                     {"k": "log", "level": "nonsense", "data": "dropped"},
                     {"k": "progress", "done": "NaN?"}, "not a note"):
            made.receive(msgspec.json.encode({"t": "n", "id": sent["id"], "n": note}))
        made.receive(msgspec.json.encode({"t": "n", "id": "someone-else", "n": {
            "k": "log", "level": "info", "data": "not mine"}}))
        made.receive(msgspec.json.encode({"t": "a", "id": sent["id"], "ok": {
            "content": [{"type": "text", "text": "done"}]}}))
        assert (await task).text == "done"
        assert heard == [("log", "info", "hi", "up"), ("progress", 1, None, None)]
        assert not made._asking  # nothing kept once answered

    asyncio.run(go())


class Flooder(FakeBridge):
    """Resumes the held call: the upstream logs 1,500 times, then answers."""

    async def relay(self, ctx: Any, method: str, params: Any) -> Any:
        for n in range(1500):
            ctx.log("info", n)
        return self.outcome


def test_a_forwarded_round_passes_on_at_most_max_notes_messages_then_the_answer() -> None:
    """docs/gateway.md: a forwarded round's progress and log messages beyond 1,000 are dropped;
    the answer still comes, last."""
    async def go() -> None:
        bridge = Flooder(CallToolResult(content=[{"type": "text", "text": "done"}]))
        made = Forwarder(bridge, "redis://127.0.0.1:1/0")  # type: ignore[arg-type]
        redis = FakeRedis()
        made._redis = redis
        await _served(made, question(l="info"))
        sent = [message for _, message in redis.sent]
        assert sent[-1]["t"] == "a" and sent[-1]["id"] == "r1"
        assert [message["n"]["data"] for message in sent[:-1]] == list(range(MAX_NOTES))
        assert MAX_NOTES == 1000

    asyncio.run(go())
