# file: docs/snippets/gateway_bridge.py
import asyncio
import sys
from pathlib import Path

import rondo
from rondo.client import Client, PendingCall

# The upstream of the proxy example, spoken to as a 2025-11-25 server: its `book` tool asks
# "Which day?" mid-call, as an elicitation/create request on the call's own stream.
command = [sys.executable, str(Path(__file__).with_name("gateway_upstream.py"))]
monday = {"action": "accept", "content": {"day": "Monday"}}


async def main() -> None:
    for bridge in ("hold", "replay"):
        front = rondo.proxy(command, upstream_protocol="2025-11-25", bridge=bridge, timeout=20.0)
        async with front.started(), Client(front, on_elicit=lambda request: monday) as client:
            # A 2026-07-28 client: the upstream's question comes back as an input round...
            pending = await client.call_tool("book", {"room": "Blue"}, manual=True)
            assert isinstance(pending, PendingCall)
            assert pending.input_requests["day"]["method"] == "elicitation/create"
            # ...and its retry answers it (the upstream call was held open, or re-made).
            done = await client.resume(pending, {"day": monday})
            assert done.text == "Blue booked for Monday"
            # Without manual=True, the client's on_elicit answers each round itself.
            assert (await client.call_tool("book", {"room": "Red"})).text == "Red booked for Monday"


asyncio.run(main())
