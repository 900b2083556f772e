# file: docs/snippets/auth_facade.py
import asyncio
import os

import httpx

import rondo
from rondo.auth.facade import Facade, MemoryStore, Upstream

# The facade's one fixed registration at your identity provider (here a Keycloak realm, found
# through OpenID discovery). Its redirect URI at the provider is https://mcp.example.com/callback.
upstream = Upstream(
    client_id="mcp-files",
    client_secret=os.environ.get("IDP_CLIENT_SECRET", "from-your-vault"),
    issuer="https://sso.example.com/realms/tools",
    scopes=("openid", "profile", "email"),
    name="Example SSO",
)
facade = Facade(
    issuer="https://mcp.example.com",          # the facade: /authorize, /token, /register, ...
    resource="https://mcp.example.com/mcp",    # what its tokens are for (aud)
    upstream=upstream,
    secret=b"32+ random bytes, the same on every worker!",  # seals, signs, derives the JWT key
    store=MemoryStore(),                       # one process; FileStore(dir) or RedisStore(url)
    scopes_supported=["files"],
)
server = rondo.Server("files", auth=facade.resource_server(), state=None)


@server.tool
async def whoami(ctx: rondo.Context) -> str:
    """Who signed in at the provider."""
    return f"{ctx.auth.subject} <{ctx.auth.claims['upstream'].get('email')}>"


@server.tool
async def my_profile(ctx: rondo.Context) -> str:
    """Call the provider's own API as the user: with the provider's token, never the client's."""
    token = await facade.upstream_token(ctx.auth)  # refreshed at the provider when stale
    return f"would call the provider with a {len(token)}-character token"


async def main() -> None:
    app = server.asgi(allowed_hosts=["mcp.example.com"])
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="https://mcp.example.com") as http:
        # What an MCP client discovers: the resource names the facade as its authorization server.
        prm = (await http.get("/.well-known/oauth-protected-resource/mcp")).json()
        assert prm["authorization_servers"] == ["https://mcp.example.com"]
        meta = (await http.get("/.well-known/oauth-authorization-server")).json()
        assert meta["code_challenge_methods_supported"] == ["S256"]
        # Dynamic registration (RFC 7591) for clients the provider has never heard of.
        client = (await http.post("/register", json={
            "client_name": "Notes App", "redirect_uris": ["http://127.0.0.1:7777/cb"],
            "token_endpoint_auth_method": "none"})).json()
        # /authorize shows the facade's consent page first: the provider is not contacted yet.
        page = await http.get("/authorize", params={
            "response_type": "code", "client_id": client["client_id"],
            "redirect_uri": "http://127.0.0.1:7777/cb", "state": "s1", "resource": prm["resource"],
            "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            "code_challenge_method": "S256", "scope": "files"})
        assert page.status_code == 200 and "Notes App" in page.text
        assert page.headers["x-frame-options"] == "DENY"


asyncio.run(main())
