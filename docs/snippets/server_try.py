# file: docs/snippets/server_try.py
import asyncio

import rondo
from rondo.client import Client

server = rondo.Server("hello", "1.0.0", instructions="Greets people.")


@server.tool
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


async def main() -> None:
    async with Client(server) as client:  # in memory: no process, no socket
        info = await client.discover()
        print(info.server_info, info.capabilities)
        print([tool.name for tool in await client.list_tools()])
        result = await client.call_tool("greet", {"name": "Ada"})
        assert result.text == "Hello, Ada!"


asyncio.run(main())
