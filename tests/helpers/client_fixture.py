"""A small rondo.Server for the client tests: every kind of question, pages, progress, lists."""

from __future__ import annotations

from typing import Any

import rondo
from rondo import elicit

server = rondo.Server("client-fixture", "1.0.0", page_size=2, list_ttl_ms=60_000, read_ttl_ms=60_000)

COLOR = elicit.form("Pick a color", {
    "type": "object",
    "properties": {"color": {"type": "string", "enum": ["red", "blue"], "default": "red"}},
    "required": ["color"],
})


@server.tool
def echo(text: str) -> str:
    """Say it back."""
    return text


@server.tool
def color(ctx: rondo.Context) -> str:
    answer = ctx.ask("color", COLOR)
    return f"color={answer.content['color']}" if answer.accepted else f"no color ({answer.action})"


@server.tool
def summary(ctx: rondo.Context) -> str:
    answer = ctx.ask("llm", rondo.sampling.create_message("Summarize", 10))
    return f"model said {answer.text}"


@server.tool
def where(ctx: rondo.Context) -> str:
    roots = ctx.ask("roots", rondo.roots.list())
    return ",".join(root.uri for root in roots)


@server.tool
def everything(ctx: rondo.Context) -> str:
    answers = ctx.ask_all({"c": COLOR, "r": rondo.roots.list()})
    return f"{answers['c'].content['color']} @ {answers['r'][0].uri}"


@server.tool
def link(ctx: rondo.Context) -> str:
    answer = ctx.ask("go", elicit.url("Sign in", "https://example.com/in"))
    return f"link {answer.action}"


@server.tool
async def slow_count(ctx: rondo.Context) -> str:
    for step in range(3):
        await ctx.report_progress(step + 1, 3, f"step {step + 1}")
    return "counted"


@server.tool
def extra_one() -> str:
    return "1"


@server.tool
def extra_two() -> str:
    return "2"


@server.resource("memo://{name}", mime_type="text/plain")
def memo(name: str) -> str:
    return f"memo {name}"


@server.prompt
def greet(name: str) -> str:
    return f"Hello {name}"


@server.completion
def complete(ref: dict[str, Any], argument: dict[str, Any], context: Any) -> list[str]:
    return [c for c in ("red", "blue", "rose") if c.startswith(argument["value"])]
