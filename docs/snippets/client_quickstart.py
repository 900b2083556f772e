# file: docs/snippets/client_quickstart.py
import asyncio

import rondo
from rondo import elicit
from rondo.client import Client, ElicitRequest

server = rondo.Server("demo")
COLOR = elicit.form("Which color?", {
    "type": "object",
    "properties": {"color": {"type": "string", "enum": ["red", "blue"]}},
    "required": ["color"],
})


@server.tool
def favorite(ctx: rondo.Context) -> str:
    answer = ctx.ask("color", COLOR)
    return f"you like {answer.content['color']}" if answer.accepted else "no answer"


def ask_user(request: ElicitRequest) -> dict:
    print("server asks:", request.message)
    return {"action": "accept", "content": {"color": "blue"}}


async def main() -> None:
    # A rondo.Server runs in memory; a URL ("http://...") or a command (stdio) works the same.
    async with Client(server, on_elicit=ask_user) as client:
        print([tool.name for tool in await client.list_tools()])
        result = await client.call_tool("favorite")
        print(result.text)
        assert result.text == "you like blue"


asyncio.run(main())
