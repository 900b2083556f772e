# file: docs/snippets/mount_fastapi.py
import asyncio

import httpx
from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

import rondo
from rondo.client import Client
from rondo.client.transports.http import HttpTransport

server = rondo.Server("shop", state=None)
events = []


@server.lifespan
async def database(server):
    pool = {"apples": 3}  # stands for `await asyncpg.create_pool(...)`
    events.append("opened")
    yield {"db": pool}  # handlers read ctx.lifespan["db"]
    events.append("closed")  # shutdown: `await pool.close()`


@server.tool
def stock(item: str, ctx: rondo.Context) -> int:
    """How many of an item are in stock."""
    return ctx.lifespan["db"].get(item, 0)


mcp = server.asgi(allowed_hosts=["shop.example", "app.example"])  # Host, and the browser's Origin
app = FastAPI(lifespan=mcp.lifespan)  # runs the server's hooks: mounted apps get no lifespan
app.mount("/mcp", mcp)  # the mount point is the endpoint: /mcp/ (and /mcp, via a 307)
app.add_middleware(  # browser clients on another origin
    CORSMiddleware,
    allow_origins=["https://app.example"],
    allow_methods=["POST", "GET", "DELETE"],
    allow_headers=["*"],  # MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*...
    expose_headers=["Mcp-Session-Id"],
)


@app.get("/health")
def health() -> dict:
    return {"ok": True}


async def main() -> None:
    async with app.router.lifespan_context(app):  # what uvicorn does at start-up/shutdown
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://shop.example")
        async with http:
            for url in ("http://shop.example/mcp", "http://shop.example/mcp/"):
                transport = HttpTransport(url, http_client=http)
                async with Client(transport) as client:
                    assert (await client.call_tool("stock", {"item": "apples"})).structured_content == 3
            assert transport.url == "http://shop.example/mcp/"  # followed Starlette's 307 once
            preflight = await http.options("/mcp/", headers={
                "Origin": "https://app.example", "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type,mcp-protocol-version,mcp-method"})
            assert preflight.status_code == 200
            assert preflight.headers["access-control-allow-origin"] == "https://app.example"
            assert (await http.post("/mcp/below", json={})).status_code == 404  # only the mount point
            assert (await http.get("/health")).json() == {"ok": True}
    assert events == ["opened", "closed"]


asyncio.run(main())
