"""The authorization facade as a fleet: 3 `rondo run` workers behind nginx sharing a real
redis-server (`RedisStore`) or one directory (`FileStore`), with node `oidc-provider` upstream. A sign-in's steps land on
different workers; 50 concurrent refreshes of one refresh token all succeed with one successor;
a reuse after the grace window revokes the family on every worker; the official TypeScript
client signs in, calls, refreshes and is refused after revocation through the fleet. And a
fleet worker on a memory store refuses to start."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import html
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.helpers import fleet_parts, redis_server
from tests.oidcserver.fixture import OidcServer

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "tests" / "helpers" / "facade_app.py"
REDIRECT = "http://127.0.0.1:9/cb"  # never served: the browser stops at the redirect
GRACE = 8.0  # long enough for 50 requests on a loaded machine


def sign_in(issuer: str) -> tuple[str, dict[str, str]]:
    """A scripted client and browser: register, authorize, consent, provider sign-in, token."""
    with httpx.Client(timeout=15) as browser:
        client = browser.post(issuer + "/register", json={
            "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], "client_name": "fleet test"}).json()
        verifier = base64.urlsafe_b64encode(os.urandom(40)).rstrip(b"=").decode()
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        page = browser.get(issuer + "/authorize", params={
            "response_type": "code", "client_id": client["client_id"], "redirect_uri": REDIRECT,
            "code_challenge": challenge, "code_challenge_method": "S256", "state": "st",
            "resource": issuer + "/mcp", "scope": "mcp offline_access"})
        assert page.status_code == 200 and "Allow access?" in page.text, page.text
        fields = {k: html.unescape(v) for k, v in re.findall(r'name="(request|csrf)" value="([^"]+)"', page.text)}
        response = browser.post(issuer + "/consent", data={**fields, "decision": "approve"})
        for _hop in range(20):  # through the provider's sign-in and back to /callback
            assert response.status_code in (302, 303), (str(response.url), response.text)
            location = str(response.url.join(response.headers["location"]))
            if location.startswith(REDIRECT):
                break
            response = browser.get(location)
        query = parse_qs(urlsplit(location).query)
        assert query["state"] == ["st"] and "code" in query, query
        tokens = browser.post(issuer + "/token", data={
            "grant_type": "authorization_code", "code": query["code"][0], "redirect_uri": REDIRECT,
            "code_verifier": verifier, "client_id": client["client_id"]}).json()
    return client["client_id"], tokens


@pytest.mark.parametrize("backend", ["redis", "file", "run-redis"])
def test_facade_fleet_behind_nginx(backend: str, tmp_path: Path) -> None:
    """`redis`: a RedisStore the app names; `file`: one host's directory (FileStore);
    `run-redis`: the app keeps the default memory store and `rondo run --redis URL` moves it."""
    nginx_port = fleet_parts.free_port()
    issuer = f"http://127.0.0.1:{nginx_port}"
    extra: tuple[str, ...] = ()
    with contextlib.ExitStack() as stack:
        if backend == "file":
            store = f"file:{tmp_path / 'facade-store'}"
        else:
            store = stack.enter_context(redis_server.running())
        if backend == "run-redis":
            extra, store = ("--redis", store), "memory"
        idp = stack.enter_context(OidcServer.start(redirect_uris=[issuer + "/callback"]))
        clock_file = tmp_path / "facade-clock"  # seconds the workers' facade clock runs ahead
        clock_file.write_text("")
        env = {"FACADE_ISSUER": issuer, "FACADE_IDP": idp.issuer, "FACADE_STORE": store,
               "FACADE_GRACE": str(GRACE), "FACADE_VERIFY_TTL": "0", "RONDO_FLEET": "1",
               "FACADE_CLOCK_FILE": str(clock_file), "PYTHONPATH": str(ROOT)}
        workers = [fleet_parts.start_worker("--allowed-hosts", "*", *extra, worker_id=f"w{i}", env=env, app=APP)
                   for i in range(3)]
        try:
            for w in workers:
                fleet_parts.wait_http(f"http://127.0.0.1:{w.port}/.well-known/oauth-authorization-server", w.proc)
            with fleet_parts.nginx(workers, port=nginx_port):
                client_id, tokens = sign_in(issuer)
                assert "refresh_token" in tokens, tokens

                async def refreshes() -> list[httpx.Response]:
                    async with httpx.AsyncClient(timeout=30) as http:
                        return await asyncio.gather(*(http.post(issuer + "/token", data={
                            "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
                            "client_id": client_id}) for _ in range(50)))

                started = time.monotonic()
                answers = asyncio.run(refreshes())
                assert time.monotonic() - started < GRACE, "the burst outlasted the grace window"
                assert [a.status_code for a in answers] == [200] * 50, [a.text for a in answers if a.status_code != 200][:3]
                successors = {a.json()["refresh_token"] for a in answers}
                assert len(successors) == 1
                successor = successors.pop()
                access = answers[0].json()["access_token"]
                call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                    "name": "whoami", "arguments": {}, "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {}}}}
                headers = {"authorization": f"Bearer {access}", "MCP-Protocol-Version": "2026-07-28",
                           "Mcp-Method": "tools/call", "Mcp-Name": "whoami"}
                seen = {httpx.post(issuer + "/mcp", json=call, headers=headers).json()["result"]["content"][0]["text"]
                        for _ in range(6)}  # round-robin: every worker verifies it
                assert seen == {"alice Alice Liddell alice@example.com"}
                # Past the grace window, the rotated token is a stolen copy: family revoked. The
                # workers' clock moves past the window at once (no waiting it out).
                clock_file.write_text(str(GRACE + 1))
                reuse = httpx.post(issuer + "/token", data={"grant_type": "refresh_token",
                                                            "refresh_token": tokens["refresh_token"],
                                                            "client_id": client_id})
                assert reuse.status_code == 400 and reuse.json()["error"] == "invalid_grant"
                newest = httpx.post(issuer + "/token", data={"grant_type": "refresh_token",
                                                             "refresh_token": successor, "client_id": client_id})
                assert newest.status_code == 400 and newest.json()["error"] == "invalid_grant"
                refused = {httpx.post(issuer + "/mcp", json=call, headers=headers).status_code for _ in range(6)}
                assert refused == {401}
                if backend == "redis":  # the official TypeScript client through the fleet
                    from tests.helpers.facade_browser import TS_STEPS, run_ts_check

                    code, output = run_ts_check(issuer + "/mcp")
                    assert code == 0 and [x for x in output if x.startswith("ok - ")] == TS_STEPS, "".join(output)
        finally:
            for w in workers:
                fleet_parts.stop(w.proc)


def test_a_fleet_worker_with_a_memory_store_refuses_to_start() -> None:
    env = {**os.environ, "FACADE_ISSUER": "http://127.0.0.1:9", "FACADE_IDP": "http://127.0.0.1:9",
           "FACADE_STORE": "memory", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "rondo", "run", str(APP), "--http", "127.0.0.1:0",
                           "--workers", "2"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "refusing to start the authorization facade" in done.stderr
