# file: docs/snippets/transports_asgi.py
import asyncio

import httpx

import rondo

server = rondo.Server("mounted", state=None)


@server.tool
def ping_back(word: str) -> str:
    """Echo a word."""
    return word


mcp = server.asgi(
    path=None,  # answer on whatever path the parent routes to us
    allowed_hosts=["mcp.example.com", "localhost"],  # Host/Origin allowlist: others get 403
    max_body=1_000_000,  # larger request bodies get 413
)


async def app(scope, receive, send):
    """A parent ASGI app (your framework's router does this): /mcp goes to rondo."""
    if scope["type"] == "http" and scope["path"].startswith("/mcp"):
        await mcp(scope, receive, send)
    elif scope["type"] == "http":
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b"not here"})


async def main() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "ping_back", "arguments": {"word": "hi"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}}
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
               "Mcp-Name": "ping_back", "Accept": "application/json, text/event-stream"}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://mcp.example.com") as http:
        ok = await http.post("/mcp", json=message, headers=headers)
        assert ok.status_code == 200 and ok.json()["result"]["content"][0]["text"] == "hi"
        evil = await http.post("/mcp", json=message, headers={**headers, "Host": "evil.example"})
        assert evil.status_code == 403
        wrong = await http.post("/mcp", json=message, headers={**headers, "Mcp-Name": "other"})
        assert wrong.status_code == 400 and wrong.json()["error"]["code"] == -32020


asyncio.run(main())
