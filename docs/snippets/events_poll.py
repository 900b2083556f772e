# file: docs/snippets/events_poll.py
import asyncio
import base64
import time

import rondo
from rondo.events import Events, sign, verify
from rondo.testing import connect

server = rondo.Server("shop")
events = server.extension(Events())  # experimental: the wire follows a draft
events.event("order.shipped", description="An order left the warehouse",
             input_schema={"type": "object", "properties": {"customer": {"type": "string"}}},
             payload_schema={"type": "object", "properties": {"order": {"type": "string"},
                                                              "customer": {"type": "string"}}})


@server.tool
async def ship(order: str, customer: str) -> str:
    """Ship an order (and tell every subscriber)."""
    await server.emit("order.shipped", {"order": order, "customer": customer})
    return f"{order} shipped"


async def main() -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    conn = connect(server)

    async def rpc(method: str, params: dict) -> dict:
        reply = await conn.send({"jsonrpc": "2.0", "id": 1, "method": method,
                                 "params": {**params, "_meta": meta}})
        return reply["result"]

    mine = {"name": "order.shipped", "arguments": {"customer": "ada"}}
    cursor = (await rpc("events/poll", {**mine, "cursor": None}))["cursor"]  # start from now
    await rpc("tools/call", {"name": "ship", "arguments": {"order": "A-1", "customer": "ada"}})
    await rpc("tools/call", {"name": "ship", "arguments": {"order": "B-2", "customer": "bob"}})
    polled = await rpc("events/poll", {**mine, "cursor": cursor})
    assert [e["data"]["order"] for e in polled["events"]] == ["A-1"]  # only ada's
    print(polled["events"][0]["eventId"], "next poll in", polled["nextPollMs"], "ms")

    # A webhook receiver checks each POST with the secret it gave when subscribing.
    secret = "whsec_" + base64.b64encode(b"0123456789abcdef0123456789abcdef").decode()
    body, now = b'{"eventId":"evt_1"}', int(time.time())
    headers = {"webhook-id": "evt_1", "webhook-timestamp": str(now),
               "webhook-signature": sign(base64.b64decode(secret[6:]), "evt_1", now, body)}
    assert verify(secret, headers, body)


asyncio.run(main())
