# file: docs/snippets/client_group.py
import asyncio
import sys
from pathlib import Path

from rondo.client import ClientGroup

upstream = str(Path(__file__).with_name("gateway_upstream.py"))
config = {"mcpServers": {  # or a path to an mcp.json file
    "bookings": {"command": sys.executable, "args": [upstream]},
    "remote": {"url": "http://127.0.0.1:9/mcp"},  # nothing listens there
}}


async def main() -> None:
    async with ClientGroup(config, connect_timeout=20) as group:
        assert list(group) == ["bookings"]  # the connected ones, by name
        assert list(group.failed) == ["remote"]  # name -> why it could not connect
        for name, client in group.items():
            tools = sorted(t.name for t in await client.list_tools())
            assert (name, tools) == ("bookings", ["add", "book"])
        assert (await group["bookings"].call_tool("add", {"a": 1, "b": 2})).text == "3"


asyncio.run(main())
