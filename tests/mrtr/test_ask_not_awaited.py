"""A forgotten `await` on `ctx.ask` in an `async def` handler fails at the first use of the answer
with an error naming the fix, on both eras."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import rondo
from rondo import elicit
from rondo.client import Client
from rondo.mrtr.ask import Awaitable

QUESTION = elicit.form("Name?", {"type": "object", "properties": {"name": {"type": "string"}},
                                 "required": ["name"]})


def make_server() -> rondo.Server:
    server = rondo.Server("forgetful", state=None)

    @server.tool
    async def greet(ctx: rondo.Context) -> str:
        """Forgets to await."""
        answer = ctx.ask("name", QUESTION)  # the bug under test: no await
        return f"hello {answer.content['name']}"

    @server.tool
    async def greet_all(ctx: rondo.Context) -> str:
        """Forgets to await ask_all."""
        answers = ctx.ask_all({"name": QUESTION})
        return f"hello {answers['name'].content['name']}"

    return server


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize(("tool", "what"), [("greet", "ask"), ("greet_all", "ask_all")])
def test_forgotten_await_names_the_fix(protocol: str, tool: str, what: str) -> None:
    async def go() -> Any:
        async with Client(make_server(), protocol=protocol,
                          on_elicit=lambda req: {"action": "accept", "content": {"name": "ann"}}) as client:
            return await client.call_tool(tool, {})

    result = asyncio.run(go())
    assert result.is_error, result
    assert f"ctx.{what}(...) was not awaited" in result.text
    assert f"answer = await ctx.{what}(...)" in result.text
    assert "_Ready" not in result.text and "coroutine" not in result.text


def test_awaiting_still_gives_the_answer() -> None:
    async def go() -> Any:
        ready = Awaitable("ask", value={"x": 1})
        return await ready

    assert asyncio.run(go()) == {"x": 1}
    with pytest.raises(TypeError, match="was not awaited"):
        bool(Awaitable("ask", value=None))


def bare_server() -> rondo.Server:
    server = rondo.Server("forgetful", state=rondo.StatePolicy(secret=b"s" * 32))

    @server.tool
    async def remember(ctx: rondo.Context) -> str:
        """Asks without await, and never looks at the answer."""
        ctx.ask("name", QUESTION)  # the bug under test: neither awaited nor used
        return "done"

    @server.tool
    async def second(ctx: rondo.Context) -> str:
        """Awaits the first question, forgets the second."""
        first = await ctx.ask("name", QUESTION)
        answer = ctx.ask("again", QUESTION)
        return f"{first.content['name']} {answer.content['name']}"

    @server.tool
    async def careful(ctx: rondo.Context) -> str:
        """Awaits both: two rounds, as before."""
        first = await ctx.ask("name", QUESTION)
        again = await ctx.ask("again", QUESTION)
        return f"{first.content['name']} {again.content['name']}"

    return server


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize(("tool", "asked_before"), [("greet", 0), ("remember", 0), ("second", 1)])
def test_forgotten_await_is_refused_before_the_user_is_asked(protocol: str, tool: str,
                                                             asked_before: int) -> None:
    asked: list[str] = []

    def user(request: Any) -> dict[str, Any]:
        asked.append(request.message)
        return {"action": "accept", "content": {"name": "ann"}}

    server = bare_server()
    server.tool(make_server().tools["greet"].fn, name="greet")

    async def go() -> Any:
        async with Client(server, protocol=protocol, on_elicit=user) as client:
            return await client.call_tool(tool, {})

    result = asyncio.run(go())
    assert result.is_error, result
    assert "was not awaited" in result.text and "await ctx.ask(...)" in result.text
    # Only the awaited question before the bug was put to the user; the forgotten one never.
    assert len(asked) == asked_before


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
def test_awaited_questions_still_ask_round_after_round(protocol: str) -> None:
    asked: list[str] = []

    def user(request: Any) -> dict[str, Any]:
        asked.append(request.message)
        return {"action": "accept", "content": {"name": f"n{len(asked)}"}}

    async def go() -> Any:
        async with Client(bare_server(), protocol=protocol, on_elicit=user) as client:
            return await client.call_tool("careful", {})

    assert asyncio.run(go()).text == "n1 n2" and len(asked) == 2
