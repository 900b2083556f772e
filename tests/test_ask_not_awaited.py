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
