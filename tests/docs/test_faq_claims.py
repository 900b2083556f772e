"""docs/faq.md says what the code does: each answer that quotes rondo's output is checked
against that output, produced here."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import rondo
from rondo.client import Client

FAQ = (Path(__file__).resolve().parents[1].parent / "docs" / "faq.md").read_text(encoding="utf-8")


def answer(question: str) -> str:
    """The FAQ's answer to the question that starts with `question`, on one line."""
    start = FAQ.index(f"**{question}")
    end = FAQ.find("\n\n**", start)
    return " ".join(FAQ[start:end].split())


def test_what_the_model_sees_when_a_tool_raises_is_what_the_faq_says() -> None:
    server = rondo.Server("faq", state=None)

    @server.tool
    def lookup(key: str) -> str:
        raise RuntimeError(f"postgres://admin:hunter2@db/{key} refused")

    @server.tool
    def explain(key: str) -> str:
        raise rondo.ToolError(f"no entry {key}")

    async def go() -> tuple[str, str]:
        async with Client(server) as client:
            raised = await client.call_tool("lookup", {"key": "k"})
            told = await client.call_tool("explain", {"key": "k"})
            assert raised.is_error and told.is_error
            return raised.text, told.text

    raised, told = asyncio.run(go())
    text = answer("What does the model see when my tool raises?")
    assert "hunter2" not in raised  # masked, as the answer must say
    quoted = re.sub(r"\(reference [0-9a-f]+\)", "(reference …)", raised)
    assert f'"{quoted}"' in text, (raised, text)
    assert "ToolError" in text and told == "no entry k"
    assert "mask_errors=False" in text


def test_the_forgotten_await_answer_quotes_the_error_the_user_gets() -> None:
    from rondo import elicit

    server = rondo.Server("faq", state=None)
    asked: list[object] = []

    @server.tool
    async def greet(ctx: rondo.Context) -> str:
        answer = ctx.ask("n", elicit.form("Name?", {"type": "object", "properties": {
            "n": {"type": "string"}}}))
        return f"hi {answer.content['n']}"

    async def go() -> str:
        async with Client(server, on_elicit=lambda r: asked.append(r) or {"action": "decline"}) as c:
            return (await c.call_tool("greet")).text

    text = answer("`'_Ready' object has no attribute 'content'`?")
    quoted = re.search(r'"(ctx\.ask\(\.\.\.\) was not awaited)"', text)
    assert quoted is not None and "before the user is asked" in text
    assert quoted.group(1) in asyncio.run(go()) and asked == []
