# file: docs/snippets/client_manual.py
import asyncio

import rondo
from rondo import elicit
from rondo.client import Client, PendingCall

server = rondo.Server("manual")
OK = elicit.form("Deploy?", {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})


@server.tool
def deploy(env: str, ctx: rondo.Context) -> str:
    answer = ctx.ask("confirm", OK)
    return f"deployed to {env}" if answer.accepted and answer.content["ok"] else "not deployed"


async def main() -> None:
    # No handler: we answer ourselves, so we declare what we can answer.
    async with Client(server, capabilities={"elicitation": {"form": {}}}) as client:
        pending = await client.call_tool("deploy", {"env": "prod"}, manual=True)
        assert isinstance(pending, PendingCall)
        print("server asks:", pending.input_requests["confirm"]["params"]["message"])
        saved = pending.to_json()  # store it anywhere: a file, a queue, a database row

    # Later, maybe in another process: answer and finish the call.
    async with Client(server, capabilities={"elicitation": {"form": {}}}) as client:
        result = await client.resume(PendingCall.from_json(saved),
                                     {"confirm": {"action": "accept", "content": {"ok": True}}})
        print(result.text)
        assert result.text == "deployed to prod"


asyncio.run(main())
