"""A rondo server behind the authorization facade, with a real OpenID provider upstream; served
by `rondo run` in the facade's live tests. Configured by environment variables:
FACADE_ISSUER (http://127.0.0.1:PORT), FACADE_IDP (the provider's issuer), FACADE_STORE
("memory", "file:DIR" or a redis:// URL), FACADE_GRACE, FACADE_VERIFY_TTL, and
FACADE_CLOCK_FILE: a file holding seconds every worker's facade clock runs ahead of the wall
clock (read on each reading of the clock), so a test moves a whole fleet's clock at once."""

from __future__ import annotations

import os
import time
from pathlib import Path

import rondo
from rondo.auth.facade import Facade, FileStore, MemoryStore, RedisStore, providers
from tests.oidcserver.fixture import CLIENT_ID, CLIENT_SECRET

ISSUER = os.environ["FACADE_ISSUER"]
STORE = os.environ.get("FACADE_STORE", "memory")
store = (MemoryStore() if STORE == "memory" else FileStore(STORE[5:]) if STORE.startswith("file:")
         else RedisStore(STORE))

CLOCK_FILE = os.environ.get("FACADE_CLOCK_FILE")


def clock() -> float:
    """The wall clock, plus what FACADE_CLOCK_FILE says (nothing when it is unset or empty)."""
    if CLOCK_FILE is None:
        return time.time()
    ahead = Path(CLOCK_FILE).read_text().strip()
    return time.time() + (float(ahead) if ahead else 0.0)


facade = Facade(
    issuer=ISSUER,
    resource=ISSUER + "/mcp",
    # The generic OpenID preset: discovery, the ID token verified against the provider's keys,
    # userinfo added. offline_access and prompt=consent: oidc-provider then issues a refresh token.
    upstream=providers.oidc(os.environ["FACADE_IDP"], client_id=CLIENT_ID, client_secret=CLIENT_SECRET,
                            scopes=("offline_access",), extra_authorize_params={"prompt": "consent"},
                            name="oidc-provider"),
    secret=b"the facade live test secret, 32 bytes or more",
    store=store,
    scopes_supported=["mcp"],
    grace=float(os.environ.get("FACADE_GRACE", "30")),
    verify_ttl=float(os.environ.get("FACADE_VERIFY_TTL", "0")),
    clock=clock,
)
server = rondo.Server("facaded", auth=facade.resource_server(),
                      state=rondo.StatePolicy(secret=b"a shared state secret of 32 bytes or more"))


@server.tool
def whoami(ctx: rondo.Context) -> str:
    """Who signed in at the provider, as the provider's userinfo says."""
    upstream = ctx.auth.claims["upstream"]
    return f"{ctx.auth.subject} {upstream.get('name')} {upstream.get('email')}"


@server.tool
async def provider_userinfo(ctx: rondo.Context) -> str:
    """Call the provider's userinfo with the provider's own token (never the client's)."""
    import httpx

    token = await facade.upstream_token(ctx.auth)
    async with httpx.AsyncClient() as http:
        doc = (await http.get(os.environ["FACADE_IDP"] + "/me",
                              headers={"authorization": f"Bearer {token}"})).json()
    return f"userinfo says {doc['sub']}"


@server.tool
def confirm(thing: str, ctx: rondo.Context) -> str:
    """An MRTR round: asks the user, then answers."""
    answer = ctx.ask("ok", rondo.elicit.form(f"Do {thing}?", {
        "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}))
    return f"{ctx.auth.subject} {'did' if answer.content['ok'] else 'skipped'} {thing}"


@server.tool
async def provider_token_fingerprint(ctx: rondo.Context) -> str:
    """A digest of the provider's access token the facade holds for this user (never the token)."""
    import hashlib

    token = await facade.upstream_token(ctx.auth)
    return hashlib.sha256(token.encode()).hexdigest()[:16]
