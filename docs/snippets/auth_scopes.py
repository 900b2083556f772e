# file: docs/snippets/auth_scopes.py
import asyncio
import time

import httpx

import rondo
from rondo.auth import InvalidToken, Principal, ResourceServer

GRANTS = {"reader-token": "mcp files:read", "writer-token": "mcp files:write"}


class DemoVerifier:
    """A custom verifier (any object with `verify` and `cache_ttl`): a fixed table of tokens."""

    cache_ttl = 60.0

    async def verify(self, token: str) -> Principal:
        if token not in GRANTS:
            raise InvalidToken("The access token is invalid")
        return Principal.from_claims({"sub": "ann", "iss": "https://sso.example.com",
                                      "scope": GRANTS[token], "exp": time.time() + 60})


auth = ResourceServer(
    resource="https://mcp.example.com/mcp",
    issuer="https://sso.example.com",
    verifier=DemoVerifier(),
    required_scopes=["mcp"],
    scope_hierarchy={"files:admin": ["files:write"], "files:write": ["files:read"]},
    list_filter="hide",  # lists show only what the token may use ("show": everything)
)
server = rondo.Server("files", auth=auth, state=None)


@server.tool(scopes=["files:read"])
def read(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


@server.tool(scopes=["files:write", "audit"])
def delete(path: str) -> str:
    """Delete a file (needs two scopes)."""
    return f"deleted {path}"


def call(name: str) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": name, "arguments": {"path": "a.txt"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}}


def headers(method: str, token: str, name: str | None = None) -> dict:
    h = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method,
         "Authorization": f"Bearer {token}"}
    if name:
        h["Mcp-Name"] = name
    return h


async def main() -> None:
    transport = httpx.ASGITransport(app=server.asgi(allowed_hosts=None))
    async with httpx.AsyncClient(transport=transport, base_url="https://mcp.example.com") as http:
        # files:write implies files:read through the hierarchy.
        ok = await http.post("/mcp", json=call("read"), headers=headers("tools/call", "writer-token", "read"))
        assert ok.json()["result"]["content"][0]["text"] == "contents of a.txt"
        # 403 names every scope the operation needs, in one challenge.
        no = await http.post("/mcp", json=call("delete"), headers=headers("tools/call", "writer-token", "delete"))
        assert no.status_code == 403
        assert no.headers["www-authenticate"].startswith(
            'Bearer error="insufficient_scope", scope="mcp files:write audit"')
        # The list shows what this token may call, and says it is per caller.
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": call("x")["params"]["_meta"]}}
        tools = await http.post("/mcp", json=listing, headers=headers("tools/list", "reader-token"))
        result = tools.json()["result"]
        assert [t["name"] for t in result["tools"]] == ["read"] and result["cacheScope"] == "private"


asyncio.run(main())
