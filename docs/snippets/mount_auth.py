# file: docs/snippets/mount_auth.py
import asyncio
import time

import httpx
from fastapi import FastAPI

import rondo
from rondo.auth import Principal, ResourceServer


class DemoVerifier:  # stands for the JwtVerifier your issuer= gives by default
    async def verify(self, token: str) -> Principal:
        return Principal.from_claims({"sub": token, "iss": "https://sso.example.com",
                                      "exp": time.time() + 60})


auth = ResourceServer(resource="https://api.example.com/mcp", issuer="https://sso.example.com",
                      verifier=DemoVerifier())
server = rondo.Server("notes", auth=auth, state=None)


@server.tool
def whoami(ctx: rondo.Context) -> str:
    """Who the token says you are."""
    return ctx.auth.subject


mcp = server.asgi(allowed_hosts=["api.example.com"])
app = FastAPI(lifespan=mcp.lifespan)
app.mount("/mcp", mcp)
# The one line the pair needs: the metadata the 401 points to lives at the origin's root.
app.mount("/.well-known/oauth-protected-resource", mcp.well_known)


async def main() -> None:
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="https://api.example.com") as http:
            denied = await http.post("/mcp/", json={})
            assert denied.status_code == 401
            pointed = denied.headers["www-authenticate"].split('resource_metadata="')[1].rstrip('"')
            assert pointed == "https://api.example.com/.well-known/oauth-protected-resource/mcp"
            meta = await http.get(pointed)
            assert meta.status_code == 200, meta.text
            assert meta.json()["resource"] == "https://api.example.com/mcp"
            assert (await http.get("/.well-known/oauth-protected-resource/other")).status_code == 404


asyncio.run(main())
