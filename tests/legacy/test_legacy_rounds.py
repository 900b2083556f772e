"""Explicit `InputRequired` on a 2025-11-25 session: questions over the back-channel, the
handler run again in-process with the answers and the new state, bounded in rounds; the
seeds' -32603 only when the client cannot answer; `ctx.url_complete` on legacy sessions."""

from __future__ import annotations

import asyncio
import types
from typing import Any

import pytest

import rondo
from rondo import InputRequired, elicit
from rondo.legacy import rounds as legacy_rounds
from rondo.state import StatePolicy
from tests.helpers.helpers_core import accept
from tests.helpers.modules import load
from tests.legacy.test_legacy import LegacyClient

COLOR = elicit.form(
    "Which color?",
    {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
)
SIZE = elicit.form(
    "Which size?",
    {"type": "object", "properties": {"size": {"type": "string"}}, "required": ["size"]},
)


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 20))


def make_server(state: Any = None) -> rondo.Server:
    server = rondo.Server("rounds", state=StatePolicy(secret=b"r" * 32) if state is None else state)

    @server.tool
    def two_rounds(ctx: rondo.Context) -> Any:
        """Round 1 asks the color, round 2 the size, carrying the color in the state."""
        responses = ctx.input_responses
        if ctx.state is None:
            if "color" not in responses:
                return InputRequired({"color": COLOR})
            return InputRequired({"size": SIZE}, state={"color": responses["color"]["content"]["color"]})
        return f"{ctx.state['color']}/{responses['size']['content']['size']}"

    @server.tool
    async def state_only(ctx: rondo.Context) -> Any:
        """Three state-only rounds, counting in the state."""
        count = ctx.state or 0
        if count < 3:
            return InputRequired(state=count + 1)
        return f"after {count} rounds"

    @server.tool
    def forever(ctx: rondo.Context) -> Any:
        return InputRequired(state=1)

    @server.prompt
    def asked_prompt(ctx: rondo.Context) -> str:
        if "color" not in ctx.input_responses:
            return InputRequired({"color": COLOR})  # type: ignore[return-value]
        return f"about {ctx.input_responses['color']['content']['color']}"

    @server.tool
    async def url_then_done(ctx: rondo.Context) -> str:
        answer = await ctx.ask("consent", elicit.url("Connect", "https://example.com/c"))
        await ctx.url_complete("consent")
        return answer.action

    return server


def test_two_explicit_rounds_over_the_back_channel() -> None:
    async def go() -> None:
        client = LegacyClient(make_server())
        asked: list[str] = []

        def answer(params: dict[str, Any]) -> dict[str, Any]:
            asked.append(params["message"])
            if "size" in params["requestedSchema"]["properties"]:
                return accept({"size": "L"})
            return accept({"color": "red"})

        client.answers["elicitation/create"] = answer
        await client.initialize()
        result = await client.result("tools/call", {"name": "two_rounds", "arguments": {}})
        assert result["content"] == [{"type": "text", "text": "red/L"}]
        assert asked == ["Which color?", "Which size?"]
        assert "resultType" not in result  # shaped for 2025-11-25

    run(go())


def test_a_prompt_too() -> None:
    async def go() -> None:
        client = LegacyClient(make_server())
        client.answers["elicitation/create"] = lambda p: accept({"color": "blue"})
        await client.initialize()
        result = await client.result("prompts/get", {"name": "asked_prompt"})
        assert result["messages"][0]["content"]["text"] == "about blue"

    run(go())


def test_state_only_rounds_run_again_after_a_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    pauses: list[float] = []

    async def paced(seconds: float) -> None:  # the injected clock: record, do not wait
        pauses.append(seconds)

    monkeypatch.setattr(legacy_rounds, "asyncio", types.SimpleNamespace(sleep=paced))

    async def go() -> None:
        client = LegacyClient(make_server())
        await client.initialize()
        result = await client.result("tools/call", {"name": "state_only", "arguments": {}})
        assert result["content"][0]["text"] == "after 3 rounds"
        # A pause before each state-only round, doubling, and no message reached the client.
        assert pauses == [0.05, 0.1, 0.2]
        assert client.seen == []

    run(go())


def test_rounds_are_bounded() -> None:
    async def go() -> None:
        client = LegacyClient(make_server())
        await client.initialize()
        error = (await client.request("tools/call", {"name": "forever", "arguments": {}}))["error"]
        assert error["code"] == -32603 and f"{legacy_rounds.MAX_ROUNDS} rounds" in error["message"]

    original = legacy_rounds.MAX_PAUSE, legacy_rounds.FIRST_PAUSE
    legacy_rounds.FIRST_PAUSE = legacy_rounds.MAX_PAUSE = 0.001
    try:
        run(go())
    finally:
        legacy_rounds.MAX_PAUSE, legacy_rounds.FIRST_PAUSE = original


def test_a_client_that_cannot_answer_gets_the_seeds_error() -> None:
    async def go() -> None:
        client = LegacyClient(make_server(), capabilities={"roots": {}})
        await client.initialize()
        error = (await client.request("tools/call", {"name": "two_rounds", "arguments": {}}))["error"]
        assert error["code"] == -32603 and "2026-07-28" in error["message"]
        assert client.seen == []  # nothing was asked

    run(go())


def test_a_refused_question_is_a_tool_error() -> None:
    async def go() -> None:
        client = LegacyClient(make_server())
        await client.initialize()

        def refuse(msg: dict[str, Any]) -> None:
            if msg.get("method") == "elicitation/create":
                reply = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -1, "message": "no"}}
                asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(client.conn.send(reply)))

        client._on = refuse  # type: ignore[method-assign]
        result = await client.result("tools/call", {"name": "two_rounds", "arguments": {}})
        assert result["isError"] is True and "refused" in result["content"][0]["text"]

    run(go())


def test_url_complete_notifies_with_the_elicitation_id() -> None:
    async def go() -> None:
        client = LegacyClient(make_server(), capabilities={"elicitation": {"form": {}, "url": {}}})
        client.answers["elicitation/create"] = lambda p: {"action": "accept"}
        await client.initialize()
        result = await client.result("tools/call", {"name": "url_then_done", "arguments": {}})
        assert result["content"][0]["text"] == "accept"
        asked = [m for m in client.seen if m.get("method") == "elicitation/create"]
        done = [m for m in client.seen if m.get("method") == "notifications/elicitation/complete"]
        assert len(asked) == 1 and len(done) == 1
        assert done[0]["params"]["elicitationId"] == asked[0]["params"]["elicitationId"]

    run(go())


def test_url_complete_is_a_no_op_on_the_modern_wire() -> None:
    from tests.helpers.helpers_core import Client

    client = Client(make_server())
    response, _ = client.flow("tools/call", {"name": "url_then_done"}, lambda k, r: {"action": "accept"})
    assert response["result"]["content"][0]["text"] == "accept" and client.notes == []


def test_the_example_serves_connect_calendar_to_a_legacy_client() -> None:
    preferences = load("examples/preferences.py")

    async def go() -> None:
        client = LegacyClient(preferences.server, capabilities={"elicitation": {"form": {}, "url": {}}})
        client.answers["elicitation/create"] = lambda p: {"action": "accept"}
        await client.initialize()
        result = await client.result("tools/call", {"name": "connect_calendar", "arguments": {"user": "ann"}})
        assert result["content"][0]["text"] == "Calendar connected for ann."
        asked = [m for m in client.seen if m.get("method") == "elicitation/create"]
        assert len(asked) == 1  # the consent answer was carried to round 2, not asked again

    run(go())
