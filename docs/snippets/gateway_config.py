# file: docs/snippets/gateway_config.py
import asyncio
import json
import sys
import tempfile
from pathlib import Path

from rondo.client import Client
from rondo.gateway import from_mcp_json

upstream = str(Path(__file__).with_name("gateway_upstream.py"))
config = {"mcpServers": {  # the format hosts use; rondo adds "timeout" (seconds)
    "bookings": {"command": sys.executable, "args": [upstream], "timeout": 20},
    "spare": {"command": sys.executable, "args": [upstream], "env": {"MODE": "${MODE:-demo}"}},
    "remote": {"url": "http://127.0.0.1:9/mcp",  # nothing listens: the others serve on
               "headers": {"Authorization": "Bearer ${REMOTE_TOKEN:-none}"}},
}}
path = Path(tempfile.mkdtemp()) / "mcp.json"
path.write_text(json.dumps(config))
gateway = from_mcp_json(path)  # a rondo.Server: serve it, mount it, wrap it


async def main() -> None:
    monday = lambda request: {"action": "accept", "content": {"day": "Monday"}}  # noqa: E731
    async with gateway.started(), Client(gateway, on_elicit=monday) as client:
        names = sorted(t.name for t in await client.list_tools())
        assert names == ["bookings_add", "bookings_book", "spare_add", "spare_book"]
        assert (await client.call_tool("bookings_add", {"a": 2, "b": 3})).text == "5"
        booked = await client.call_tool("spare_book", {"room": "Blue"})
        assert booked.text == "Blue booked for Monday"


asyncio.run(main())
