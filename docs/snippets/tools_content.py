# file: docs/snippets/tools_content.py
import asyncio

import rondo
from rondo import ToolResult
from rondo.client import Client
from rondo.content import ContentBlock, embedded, image, resource_link, text

server = rondo.Server("content")
PIXEL = b"\x89PNG\r\n\x1a\n"  # (not a whole image; any bytes are base64-encoded for you)


@server.tool
def report() -> list[ContentBlock]:
    """Several blocks: text, an image, an embedded resource and a link."""
    return [
        "Here is the report:",
        image(PIXEL, "image/png"),
        embedded("notes://summary", text="All green.", mime_type="text/plain"),
        resource_link("notes://full", "full report"),
    ]


@server.tool
def custom() -> ToolResult:
    """Full control over the result."""
    return ToolResult([text("2 rows")], structured={"rows": [1, 2]})


async def main() -> None:
    async with Client(server) as client:
        blocks = (await client.call_tool("report")).content
        assert [b["type"] for b in blocks] == ["text", "image", "resource", "resource_link"]
        result = await client.call_tool("custom")
        assert result.structured_content == {"rows": [1, 2]}


asyncio.run(main())
