# file: docs/snippets/state_manual.py
import asyncio
import os

import rondo
from rondo import InputRequired
from rondo.client import Client

SECRET = os.urandom(32)  # in production: a shared secret from your secret store
server = rondo.Server("travel", state=None)  # boundary off: ctx.state is the raw string


@server.tool
def book(city: str, ctx: rondo.Context) -> object:
    """Seal and open the state by hand."""
    if ctx.state is None:
        token = rondo.state.seal({"quote": 120}, ctx, secret=SECRET, principal=None,
                                 ttl=60, once=True)
        return InputRequired(state=token)
    data = rondo.state.open(ctx.state, ctx, secret=SECRET, principal=None)  # or -32602
    return f"booked {city} at {data['quote']} EUR"


async def main() -> None:
    async with Client(server) as client:  # round 1 seals, the retry opens (once)
        assert (await client.call_tool("book", {"city": "Oslo"})).text == "booked Oslo at 120 EUR"


asyncio.run(main())

# The same calls work on any Context, e.g. in a unit test:
ctx = rondo.Context(server, request_method="tools/call",
                    request_params={"name": "book", "arguments": {"city": "Oslo"}})
token = rondo.state.seal({"quote": 120}, ctx, secret=SECRET, principal="alice", once=True)
opened = rondo.state.open(token, ctx, secret=SECRET, principal="alice")
print(opened)  # {'quote': 120}
assert opened == {"quote": 120}
try:
    rondo.state.open(token, ctx, secret=SECRET, principal="alice")  # once=True: used up
except rondo.McpError as err:
    print(err.code, err.message)  # -32602 Invalid requestState: ...
    assert err.code == -32602
else:
    raise AssertionError("a once=True token opened twice")
