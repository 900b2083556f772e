# file: docs/snippets/resources_basic.py
import asyncio

import rondo
from rondo.client import Client

server = rondo.Server("notes", read_ttl_ms=0, read_cache_scope="private")  # per-server defaults
NOTES = {"1": "Buy milk", "2": "Call Ada"}


@server.resource("notes://readme", mime_type="text/markdown", ttl_ms=60_000, cache_scope="public")
def readme() -> str:
    """How the notes are organised (the same for everyone: cache it publicly for a minute)."""
    return "# Notes\nOne note per id."


@server.resource("notes://{id}", mime_type="text/plain")
async def note(id: str) -> str:
    """One note, by id (a template: it appears in resources/templates/list)."""
    if id not in NOTES:
        raise rondo.McpError(-32602, "Resource not found", {"uri": f"notes://{id}"})
    return NOTES[id]


@server.resource("notes://logo", mime_type="image/png")
def logo() -> bytes:
    return b"\x89PNG"  # bytes are sent as a base64 blob


async def main() -> None:
    async with Client(server) as client:
        print([r.uri for r in await client.list_resources()])
        print([t.uri_template for t in await client.list_resource_templates()])
        read = await client.read_resource("notes://readme")
        assert read.ttl_ms == 60_000 and read.cache_scope == "public"
        assert (await client.read_resource("notes://2")).text == "Call Ada"
        try:
            await client.read_resource("notes://9")
        except rondo.McpError as exc:
            assert exc.code == -32602 and exc.data == {"uri": "notes://9"}


asyncio.run(main())
