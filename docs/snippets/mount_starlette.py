# file: docs/snippets/mount_starlette.py
import asyncio

import httpx
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

import rondo

server = rondo.Server("notes", state=None)


@server.tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


mcp = server.asgi()  # no path=...: the mount point is the endpoint
app = Starlette(
    routes=[Route("/", lambda request: PlainTextResponse("home")), Mount("/api/mcp", mcp)],
    lifespan=mcp.lifespan,
)


async def plain(scope, receive, send):
    """A hand-written ASGI router: set root_path to the mount point, as Starlette does."""
    if scope["type"] == "http" and scope["path"].rstrip("/") == "/rpc":
        await mcp({**scope, "root_path": "/rpc"}, receive, send)
    else:
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})


async def call(http: httpx.AsyncClient, path: str) -> httpx.Response:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "shout", "arguments": {"text": "hi"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}}
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
               "Mcp-Name": "shout", "Accept": "application/json, text/event-stream"}
    return await http.post(path, json=message, headers=headers)


async def main() -> None:
    for asgi, path in ((app, "/api/mcp/"), (plain, "/rpc")):
        transport = httpx.ASGITransport(app=asgi)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
            answer = await call(http, path)
            assert answer.json()["result"]["content"][0]["text"] == "HI", answer.text
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost") as http:
        moved = await call(http, "/api/mcp")
        assert moved.status_code == 307 and moved.headers["location"] == "http://localhost/api/mcp/"


asyncio.run(main())
