# file: docs/snippets/testing_principal.py
import asyncio

import rondo
from rondo.auth import ResourceServer
from rondo.client import Client
from rondo.testing import principal

server = rondo.Server("notes", state=None, auth=ResourceServer(
    resource="https://mcp.example.com/mcp", issuer="https://sso.example.com"))


@server.tool
def whoami(ctx: rondo.Context) -> str:
    """Who the verified token says you are."""
    return f"{ctx.auth.subject} with {sorted(ctx.auth.scopes)}"


async def main() -> None:
    alice = principal("alice", scopes=["notes:read"])  # no token, no authorization server
    async with Client(server, auth=alice) as client:
        assert (await client.call_tool("whoami")).text == "alice with ['notes:read']"
    async with Client(server, auth=principal(None, client_id="nightly-job")) as client:
        assert (await client.call_tool("whoami")).text == "None with []"  # a machine client


asyncio.run(main())
