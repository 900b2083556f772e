# file: docs/snippets/middleware_ready.py
import asyncio
import logging

import rondo
from rondo.client import Client
from rondo.client.transports.memory import MemoryTransport
from rondo.middleware import RATE_LIMITED, RateLimit, RequestLog

logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")

# Who a request is comes from the server's StatePolicy principal (here: the transport's auth).
policy = rondo.StatePolicy(secret=b"s" * 32, principal=lambda ctx: ctx.auth)
limit = RateLimit(rate=5, burst=2)  # 5 requests/s per principal on average, bursts of 2
server = rondo.Server("limited", state=policy, middleware=[RequestLog(), limit])


@server.tool
def ping() -> str:
    return "pong"


async def main() -> None:
    # In memory, `auth` stands for what an authenticating transport would attach.
    ann, bob = MemoryTransport(server, auth="ann"), MemoryTransport(server, auth="bob")
    async with Client(ann, protocol="2026-07-28") as ann, Client(bob, protocol="2026-07-28") as bob:
        assert (await ann.call_tool("ping")).text == "pong"
        assert (await ann.call_tool("ping")).text == "pong"
        try:
            await ann.call_tool("ping")  # her burst of 2 is spent
        except rondo.McpError as exc:
            assert exc.code == RATE_LIMITED and exc.data["retryAfterMs"] > 0
        else:
            raise AssertionError("ann should be limited")
        assert (await bob.call_tool("ping")).text == "pong"  # bob has his own bucket


asyncio.run(main())
