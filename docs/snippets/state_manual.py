# file: docs/snippets/state_manual.py
import os

import rondo
from rondo import InputRequired

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


# The same calls work on any Context, e.g. in a unit test:
ctx = rondo.Context(server, request_method="tools/call",
                    request_params={"name": "book", "arguments": {"city": "Oslo"}})
token = rondo.state.seal({"quote": 120}, ctx, secret=SECRET, principal="alice", once=True)
print(rondo.state.open(token, ctx, secret=SECRET, principal="alice"))  # {'quote': 120}
try:
    rondo.state.open(token, ctx, secret=SECRET, principal="alice")  # once=True: used up
except rondo.McpError as err:
    print(err.code, err.message)
