"""A provider preset against real software: `providers.oidc` as the facade's upstream in front of
node `oidc-provider` (pinned, no dynamic registration). rondo.Client signs in through the facade;
the identity the tool sees holds the ID token's own claims (`iss`, `aud`), so the preset's
reader verified the provider's real ID token with the keys it publishes (discovery, JWKS) and
merged the provider's userinfo (`name`, `email`)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from rondo.client import Client, LoopbackRedirect, MemoryTokenStore, OAuth
from tests.auth.test_facade_live import Browser
from tests.helpers.auth_live import free_port
from tests.oidcserver.fixture import CLIENT_ID, OidcServer

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def test_the_oidc_preset_signs_users_in_through_the_facade_with_a_verified_id_token() -> None:
    port = free_port()
    issuer = f"http://127.0.0.1:{port}"
    with OidcServer.start(redirect_uris=[issuer + "/callback"]) as idp:
        env = {**os.environ, "FACADE_ISSUER": issuer, "FACADE_IDP": idp.issuer,
               "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen([sys.executable, "-m", "rondo", "run",
                                 "tests/helpers/facade_preset_app.py", "--http", f"127.0.0.1:{port}"],
                                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 20
            while True:
                try:
                    if httpx.get(issuer + "/.well-known/oauth-authorization-server").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                assert time.monotonic() < deadline, "facade app did not start"
                time.sleep(0.1)
            browser = Browser()
            auth = OAuth(redirect=LoopbackRedirect(announce=browser, open_browser=False, timeout=30),
                         store=MemoryTokenStore())

            async def flow() -> object:
                async with Client(issuer + "/mcp", auth=auth) as client:
                    return (await client.call_tool("upstream_identity", {})).structured_content

            seen = asyncio.run(asyncio.wait_for(flow(), 90))
        finally:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    assert not browser.errors, browser.errors
    assert seen == {"iss": idp.issuer, "aud": CLIENT_ID, "sub": "alice", "name": "Alice Liddell",
                    "email": "alice@example.com"}
    assert browser.consent_pages == 1
