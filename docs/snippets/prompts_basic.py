# file: docs/snippets/prompts_basic.py
import asyncio

import rondo
from rondo.client import Client
from rondo.content import assistant, user

server = rondo.Server("prompts")


@server.prompt
def review(code: str, style: str = "terse") -> str:
    """Ask for a code review."""
    return f"Review this code ({style}):\n{code}"


@server.prompt(title="Explain like I'm five")
def eli5(topic: str) -> list:
    """A short conversation to start from."""
    return [user(f"Explain {topic} simply."), assistant("Sure! Imagine..."), user("Go on.")]


@server.completion
def complete(ref: dict, argument: dict, context: dict) -> list[str]:
    """Suggestions for prompt arguments (and resource template variables)."""
    if argument["name"] == "style":
        return [s for s in ("terse", "thorough") if s.startswith(argument["value"])]
    return []


async def main() -> None:
    async with Client(server) as client:
        prompts = {p.name: p for p in await client.list_prompts()}
        print(prompts["review"].arguments)  # code is required, style is not
        got = await client.get_prompt("review", {"code": "x = 1"})
        print(got.messages[0].content["text"])
        assert len((await client.get_prompt("eli5", {"topic": "DNS"})).messages) == 3
        try:
            await client.get_prompt("review", {})
        except rondo.McpError as exc:
            assert exc.code == -32602  # missing required argument 'code'


asyncio.run(main())
