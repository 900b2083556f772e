"""A rondo server behind the authorization facade whose upstream is a provider PRESET
(`providers.oidc`: discovery, a verified ID token plus userinfo) in front of the real
oidc-provider; served by `rondo run` in tests/auth/test_providers_live.py. FACADE_ISSUER
(http://127.0.0.1:PORT) and FACADE_IDP (the provider's issuer) configure it."""

from __future__ import annotations

import os

import rondo
from rondo.auth.facade import Facade, MemoryStore, providers
from tests.oidcserver.fixture import CLIENT_ID, CLIENT_SECRET

ISSUER = os.environ["FACADE_ISSUER"]
facade = Facade(
    issuer=ISSUER,
    resource=ISSUER + "/mcp",
    upstream=providers.oidc(os.environ["FACADE_IDP"], client_id=CLIENT_ID,
                            client_secret=CLIENT_SECRET, scopes=["offline_access"],
                            extra_authorize_params={"prompt": "consent"}, name="oidc-provider"),
    secret=b"the facade preset test secret, 32 bytes or more",
    store=MemoryStore(),
    scopes_supported=["mcp"],
    verify_ttl=0,
)
server = rondo.Server("preset", auth=facade.resource_server(),
                      state=rondo.StatePolicy(secret=b"a shared state secret of 32 bytes or more"))


@server.tool
def upstream_identity(ctx: rondo.Context) -> dict[str, object]:
    """What the preset read at sign-in: the verified ID token's claims and userinfo's."""
    claims = ctx.auth.claims["upstream"]
    return {key: claims.get(key) for key in ("iss", "aud", "sub", "name", "email")}
