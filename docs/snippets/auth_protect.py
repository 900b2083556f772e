# file: docs/snippets/auth_protect.py
import asyncio

import httpx

import rondo
from rondo.auth import ResourceServer

auth = ResourceServer(
    resource="https://mcp.example.com/mcp",  # the URL clients use; tokens must name it in aud
    issuer="https://keycloak.example.com/realms/tools",  # exactly as the AS metadata says
    scopes_supported=["mcp:use"],  # advertised; what a client asks for first
    required_scopes=["mcp:use"],  # needed for every request to this server
)
server = rondo.Server("files", auth=auth, state=None)


@server.tool
def whoami(ctx: rondo.Context) -> str:
    """Who the verified token says you are."""
    return ctx.auth.subject


async def main() -> None:
    app = server.asgi(allowed_hosts=["mcp.example.com"])
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="https://mcp.example.com") as http:
        # RFC 9728 metadata, at the path-suffixed well-known URI of the endpoint.
        meta = await http.get("/.well-known/oauth-protected-resource/mcp")
        assert meta.json() == {
            "resource": "https://mcp.example.com/mcp",
            "authorization_servers": ["https://keycloak.example.com/realms/tools"],
            "bearer_methods_supported": ["header"],
            "scopes_supported": ["mcp:use"],
        }
        # No token: 401 and a challenge that tells the client where to start.
        denied = await http.post("/mcp", json={})
        assert denied.status_code == 401
        assert denied.headers["www-authenticate"] == (
            'Bearer scope="mcp:use", resource_metadata='
            '"https://mcp.example.com/.well-known/oauth-protected-resource/mcp"')
        # A malformed token never reaches the verifier (nor the AS): 401 invalid_token.
        bad = await http.post("/mcp", json={}, headers={"Authorization": "Bearer not a token"})
        assert bad.status_code == 401 and 'error="invalid_token"' in bad.headers["www-authenticate"]


asyncio.run(main())
