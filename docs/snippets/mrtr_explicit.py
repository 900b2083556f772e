# file: docs/snippets/mrtr_explicit.py
import asyncio

import rondo
from rondo import InputRequired, elicit
from rondo.client import Client

server = rondo.Server("explicit")
CONFIRM = elicit.form("Delete 3 files?", {
    "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})


@server.tool
def cleanup(folder: str, ctx: rondo.Context) -> object:
    """The explicit style: read the answer yourself, return InputRequired when it is missing."""
    answer = elicit.response(ctx, "confirm", CONFIRM)  # MISSING, or a checked ElicitResult
    if answer is elicit.MISSING:
        files = ["a.tmp", "b.tmp", "c.tmp"]  # what we found: sealed, comes back as ctx.state
        return InputRequired({"confirm": CONFIRM}, state={"files": files})
    if not (answer.accepted and answer.content["ok"]):
        return "Nothing deleted."
    return f"Deleted {len(ctx.state['files'])} files from {folder}."


async def main() -> None:
    yes = lambda request: {"action": "accept", "content": {"ok": True}}  # noqa: E731
    async with Client(server, on_elicit=yes) as client:
        assert (await client.call_tool("cleanup", {"folder": "/tmp"})).text == (
            "Deleted 3 files from /tmp."
        )


asyncio.run(main())
