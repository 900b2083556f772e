# file: docs/snippets/state_rotation.py
import secrets
import types

import rondo
from rondo import McpError

a, b = ("a", secrets.token_bytes(32)), ("b", secrets.token_bytes(32))
ctx = rondo.Context(types.SimpleNamespace(name="travel"), request_method="tools/call",
                    request_params={"name": "book", "arguments": {"city": "Oslo"}})


def opens(reader: list, writer: list) -> bool:
    """Does a node on keys `reader` open what a node on keys `writer` sealed?"""
    token = rondo.StatePolicy(keys=writer).seal_for(ctx, {"quote": 120})
    try:
        return rondo.StatePolicy(keys=reader).open_for(ctx, token) == {"quote": 120}
    except McpError:
        return False


steps = [[a], [a, b], [b, a], [b]]  # now; 1. add b; 2. sign with b; 3. drop a
for before, after in zip(steps[:-1], steps[1:], strict=True):
    # Mid-deploy, old and new nodes serve side by side: both directions must work.
    assert opens(before, after) and opens(after, before)
    print([k for k, _ in before], "->", [k for k, _ in after], "ok both ways")

assert not opens([a], [b])  # skipping steps strands tokens
