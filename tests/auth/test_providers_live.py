"""A provider preset against real software: `providers.oidc` as the facade's upstream in front of
node `oidc-provider` (pinned, no dynamic registration). rondo.Client signs in through the facade;
the identity the tool sees holds the ID token's own claims (`iss`, `aud`), so the preset's
reader verified the provider's real ID token with the keys it publishes (discovery, JWKS) and
merged the provider's userinfo (`name`, `email`)."""

from __future__ import annotations

import asyncio

import pytest

from rondo.client import Client, LoopbackRedirect, MemoryTokenStore, OAuth
from tests.helpers.facade_browser import Browser, facade_served
from tests.helpers.loopback import free_port
from tests.oidcserver.fixture import CLIENT_ID, OidcServer

pytestmark = pytest.mark.slow


def test_the_oidc_preset_signs_users_in_through_the_facade_with_a_verified_id_token() -> None:
    port = free_port()
    browser = Browser()
    with OidcServer.start(redirect_uris=[f"http://127.0.0.1:{port}/callback"]) as idp, \
            facade_served("tests/helpers/facade_preset_app.py", {"FACADE_IDP": idp.issuer},
                          port) as issuer:
        auth = OAuth(redirect=LoopbackRedirect(announce=browser, open_browser=False, timeout=30),
                     store=MemoryTokenStore())

        async def flow() -> object:
            async with Client(issuer + "/mcp", auth=auth) as client:
                return (await client.call_tool("upstream_identity", {})).structured_content

        seen = asyncio.run(asyncio.wait_for(flow(), 90))
    assert not browser.errors, browser.errors
    assert seen == {"iss": idp.issuer, "aud": CLIENT_ID, "sub": "alice", "name": "Alice Liddell",
                    "email": "alice@example.com"}
    assert browser.consent_pages == 1
