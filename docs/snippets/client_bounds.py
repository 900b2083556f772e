# file: docs/snippets/client_bounds.py
import asyncio

import rondo
from rondo import InputRequired
from rondo.client import Client, InputRequiredError

server = rondo.Server("stubborn")


@server.tool
def forever(ctx: rondo.Context) -> InputRequired:
    return InputRequired(state="come back later")  # a state-only round, again and again


async def main() -> None:
    async with Client(server, max_rounds=3) as client:
        try:
            await client.call_tool("forever")
        except InputRequiredError as exc:
            print(exc.reason, exc.rounds, exc.last_result["resultType"])
            assert exc.reason == "rounds" and exc.rounds == 3

    async with Client(server, max_rounds=1000, deadline=0.5) as client:
        try:
            await client.call_tool("forever")
        except InputRequiredError as exc:
            print(exc.reason, "after", exc.rounds, "rounds")
            assert exc.reason == "deadline"


asyncio.run(main())
