# file: docs/snippets/gateway_proxy.py
import asyncio
import sys
from pathlib import Path

import rondo
from rondo.client import Client

# Any MCP server: a Streamable HTTP URL ("https://host/mcp"), or a command line as here.
command = [sys.executable, str(Path(__file__).with_name("gateway_upstream.py"))]
front = rondo.proxy(command, timeout=20.0)  # a rondo.Server: serve, mount or wrap it


async def main() -> None:
    monday = lambda request: {"action": "accept", "content": {"day": "Monday"}}  # noqa: E731
    async with front.started():  # connects upstream and lists what it serves
        for protocol in ("2026-07-28", "2025-11-25"):
            async with Client(front, protocol=protocol, on_elicit=monday) as client:
                assert sorted(t.name for t in await client.list_tools()) == ["add", "book"]
                assert (await client.call_tool("add", {"a": 2, "b": 3})).text == "5"
                booked = await client.call_tool("book", {"room": "Blue"})
                assert booked.text == "Blue booked for Monday"


asyncio.run(main())
