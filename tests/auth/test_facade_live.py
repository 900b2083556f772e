"""The facade against real software on loopback: node `oidc-provider` (pinned, NO dynamic
registration) as the upstream provider, the facade app served by `rondo run`, and rondo's own
client signing in through it (registration, consent, PKCE, the provider's sign-in, token), a
tool reading the provider's identity, an MRTR round, refresh, and refusal after revocation."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from rondo.client import Client, LoopbackRedirect, MemoryTokenStore, OAuth
from tests.helpers.auth_live import free_port
from tests.helpers.facade_browser import Browser, facade_served
from tests.oidcserver.fixture import OidcServer

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def world() -> Iterator[dict[str, Any]]:
    port = free_port()
    # The provider's access tokens live 31 s: 1 s after a sign-in the facade counts them as
    # stale (it refreshes 30 s ahead), so every later use exercises a refresh at the provider.
    with OidcServer.start(redirect_uris=[f"http://127.0.0.1:{port}/callback"], access_ttl=31) as idp, \
            facade_served("tests/helpers/facade_app.py", {"FACADE_IDP": idp.issuer,
                                                          "FACADE_VERIFY_TTL": "0"}, port) as issuer:
        yield {"url": issuer + "/mcp", "issuer": issuer, "idp": idp}


def sign_in(browser: Browser, store: MemoryTokenStore) -> OAuth:
    return OAuth(redirect=LoopbackRedirect(announce=browser, open_browser=False, timeout=30), store=store)


def stored(store: MemoryTokenStore) -> dict[str, Any]:
    tokens = [v for k, v in store._data.items() if k.startswith("token ")]
    assert len(tokens) == 1
    return dict(tokens[0])


def test_the_provider_has_no_dynamic_registration(world: dict[str, Any]) -> None:
    doc = httpx.get(world["idp"].issuer + "/.well-known/openid-configuration").json()
    assert "registration_endpoint" not in doc
    assert httpx.post(world["idp"].issuer + "/reg", json={"redirect_uris": ["http://127.0.0.1/x"]}).status_code == 404


def test_rondo_client_signs_in_through_the_facade_and_is_refused_after_revocation(world: dict[str, Any]) -> None:
    url = world["url"]
    browser = Browser()
    store = MemoryTokenStore()
    auth = sign_in(browser, store)
    answers: list[Any] = []

    def on_elicit(request: Any) -> dict[str, Any]:
        answers.append(request)
        return {"action": "accept", "content": {"ok": True}}

    async def flow() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(url, auth=auth, on_elicit=on_elicit) as client:
            out["who"] = (await client.call_tool("whoami", {})).text
            out["userinfo"] = (await client.call_tool("provider_userinfo", {})).text
            out["mrtr"] = (await client.call_tool("confirm", {"thing": "the backup"})).text
            out["first"] = stored(store)
            auth.refresh_margin = 10_000  # every token now "expires soon": refresh before the call
            out["after_refresh"] = (await client.call_tool("whoami", {})).text
            auth.refresh_margin = 60
            out["second"] = stored(store)
        return out

    out = asyncio.run(asyncio.wait_for(flow(), 90))
    assert not browser.errors, browser.errors
    assert out["who"] == "alice Alice Liddell alice@example.com"
    assert out["userinfo"] == "userinfo says alice"  # the provider's token, refreshed if stale
    assert out["mrtr"] == "alice did the backup" and len(answers) == 1
    assert out["after_refresh"] == out["who"]
    assert out["second"]["access_token"] != out["first"]["access_token"]
    assert out["second"]["refresh_token"] != out["first"]["refresh_token"]  # rotated
    assert len(browser.visits) == 1 and browser.consent_pages == 1  # one sign-in, one consent
    first = httpx.URL(browser.visits[0]).params
    assert first["resource"] == url and first["code_challenge_method"] == "S256"
    assert world["idp"].sign_ins() >= 1

    # Revoke (RFC 7009) with the client's own credentials: refresh and access both refused.
    client_id = next(v for k, v in store._data.items() if k.startswith("client "))["client_id"]
    revoked = httpx.post(world["issuer"] + "/revoke", data={"token": out["second"]["refresh_token"],
                                                           "client_id": client_id})
    assert revoked.status_code == 200
    refresh = httpx.post(world["issuer"] + "/token", data={
        "grant_type": "refresh_token", "refresh_token": out["second"]["refresh_token"], "client_id": client_id})
    assert refresh.status_code == 400 and refresh.json()["error"] == "invalid_grant"
    call = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "whoami", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}},
        headers={"authorization": f"Bearer {out['second']['access_token']}",
                 "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "whoami"})
    assert call.status_code == 401
    # The same browser signs in again for the same client: consent is remembered.
    again = Browser()
    again.http = browser.http

    async def second_run() -> str:
        async with Client(url, auth=sign_in(again, MemoryTokenStore())) as client:
            return (await client.call_tool("whoami", {})).text

    assert asyncio.run(asyncio.wait_for(second_run(), 60)).startswith("alice ")
    assert again.consent_pages == 1  # a new registration is a new client: asked again


CONFORMANCE = ROOT / ".cache" / "conformance" / "node_modules" / ".bin" / "conformance"
NODE_BIN = ROOT / ".cache" / "node" / "node_modules" / "node" / "bin"


def test_conformance_authorization_command_passes_against_the_facade(world: dict[str, Any], tmp_path: Path) -> None:
    """The pinned conformance runner's authorization-server scenarios: the metadata endpoint,
    and a real authorization code grant (the runner prints the URL, our browser signs in)."""
    assert CONFORMANCE.exists(), "the pinned conformance runner is not installed: bash scripts/setup.sh"
    port = free_port()
    client = httpx.post(world["issuer"] + "/register", json={
        "redirect_uris": [f"http://127.0.0.1:{port}/callback"], "token_endpoint_auth_method": "none",
        "client_name": "conformance runner"}).json()
    env = {**os.environ, "PATH": f"{NODE_BIN}:{os.environ['PATH']}"}
    proc = subprocess.Popen([str(CONFORMANCE), "authorization", "--url", world["issuer"],
                             "--client-id", client["client_id"], "--resource", world["url"],
                             "-p", str(port), "-o", str(tmp_path)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    browser = Browser()
    output: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            output.append(line)
            if line.startswith(world["issuer"] + "/authorize?"):
                browser(line.strip())
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = "".join(output)
    assert not browser.errors, browser.errors
    assert len(browser.visits) == 1, text
    assert proc.returncode == 0, text
    checks = {}
    for path in tmp_path.rglob("checks.json"):
        import json

        for check in json.loads(path.read_text()):
            checks[check["id"]] = check["status"]
    assert checks == {"authorization-server-metadata": "SUCCESS", "authorization-code-grant": "SUCCESS",
                      "authorization-server-metadata-cimd": "SUCCESS"}, text
    assert "Total: 3 passed, 0 failed" in text


def test_rondo_call_signs_in_through_the_facade(world: dict[str, Any], tmp_path: Path) -> None:
    """`rondo call` (the terminal client): it prints the facade's /authorize URL, the browser
    approves consent and signs in at the provider, the call completes; the second run reuses
    the stored token (no sign-in), and an MRTR round is answered from --answers."""
    store = tmp_path / "tokens.json"
    browser = Browser()

    def run(*args: str) -> tuple[str, str, int]:
        proc = subprocess.Popen([sys.executable, "-m", "rondo.cli", "call", world["url"], *args,
                                 "--token-store", str(store), "--no-browser"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        errors: list[str] = []

        def watch() -> None:
            assert proc.stderr is not None
            for line in proc.stderr:
                errors.append(line)
                for word in line.split():
                    if word.startswith(world["issuer"] + "/authorize?"):
                        browser(word)

        reader = threading.Thread(target=watch, daemon=True)
        reader.start()
        out, _ = proc.communicate(timeout=60)
        reader.join(5)
        return out, "".join(errors), proc.returncode

    out, err, code = run("whoami")
    assert (out.strip(), code) == ("alice Alice Liddell alice@example.com", 0), err
    assert len(browser.visits) == 1 and browser.consent_pages == 1 and not browser.errors
    answers = tmp_path / "answers.json"
    answers.write_text('{"ok": true}')
    out, err, code = run("confirm", "thing=the report", "--answers", str(answers))
    assert (out.strip(), code) == ("alice did the report", 0), err
    assert len(browser.visits) == 1  # the stored token served the second run


def test_official_typescript_client_signs_in_through_the_facade(world: dict[str, Any]) -> None:
    """interop/ts_facade_check.mjs: the official TypeScript client 2.4.0 and its OAuth provider
    (discovery, registration, PKCE, token, a tool reading the provider identity, MRTR, refresh
    with rotation, refused after revocation); this test plays the browser."""
    from tests.helpers.facade_browser import TS_STEPS, run_ts_check

    code, output = run_ts_check(world["url"])
    assert code == 0, "".join(output)
    assert [line for line in output if line.startswith("ok - ")] == TS_STEPS, "".join(output)


def test_the_inspector_cli_signs_in_through_the_facade(world: dict[str, Any], tmp_path: Path) -> None:
    """mcpdo (MCP Inspector 2.12.0): connect -> pendingAuth -> the facade's consent and the
    provider's sign-in (this test's browser) -> mcpdo's own loopback callback -> a tool reading
    the provider identity -> an MRTR round answered through `elicitation/respond` -> after the
    facade revokes its tokens, `auth_required` (it cannot refresh)."""
    import json

    from tests.helpers.facade_browser import approve

    inspector = ROOT / "interop" / "node_modules" / ".bin" / "mcpdo"
    assert inspector.exists(), "interop/node_modules not installed: run bash scripts/setup.sh"
    env = {**os.environ, "HOME": str(tmp_path), "MCP_INSPECTOR_SECRET_STORE": "file",
           "NODE_NO_WARNINGS": "1", "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    exports = subprocess.run([str(inspector), "private"], env=env, capture_output=True, text=True,
                             check=True, timeout=30).stdout
    for line in exports.splitlines():  # export NAME='value'
        name, _, value = line.removeprefix("export ").partition("=")
        env[name] = value.strip("'")

    def mcpdo(*args: str) -> dict[str, Any]:
        out = subprocess.run([str(inspector), "--format", "json", *args], env=env,
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stdout + out.stderr
        return dict(json.loads(out.stdout))

    url = world["url"]
    try:
        connected = mcpdo("connect", url, "--era", "modern")
        assert connected["pendingAuth"] is True
        auth_url = connected["authUrl"]
        assert auth_url.startswith(world["issuer"] + "/authorize?")
        redirect = httpx.URL(auth_url).params["redirect_uri"]
        with httpx.Client(timeout=15) as browser:
            back = approve(browser, auth_url, redirect)
        assert httpx.get(back, timeout=10).status_code == 200  # mcpdo's own listener
        conn = ("--connection", url)
        assert mcpdo(*conn, "connections/show")["auth"]["authorized"] is True
        who = mcpdo(*conn, "tools/call", "whoami")
        assert who["content"][0]["text"] == "alice Alice Liddell alice@example.com"
        pending = mcpdo(*conn, "tools/call", "confirm", "thing:=the audit")["elicitationPending"]
        assert pending["message"] == "Do the audit?"
        done = mcpdo(*conn, "elicitation/respond", pending["elicitationId"], "ok:=true")
        assert done["content"][0]["text"] == "alice did the audit"
        # Revoked at the facade (RFC 7009, with the client id and refresh token mcpdo stored):
        # its next call is refused, it cannot refresh, and no tool answers.
        store = tmp_path / ".mcp-inspector"
        secrets = json.loads((store / "secrets.json").read_text())["secrets"]
        saved = json.loads(next(v for k, v in secrets.items() if k.endswith(":tokens:" + world["issuer"])))
        client_id = re.search(r'"client_id":\s*"([^"]+)"', (store / "storage" / "oauth.json").read_text()
                              + "".join(secrets.values()).replace('\\"', '"'))
        assert client_id is not None
        revoked = httpx.post(world["issuer"] + "/revoke", data={"token": saved["refresh_token"],
                                                               "client_id": client_id.group(1)})
        assert revoked.status_code == 200
        after = subprocess.run([str(inspector), "--format", "json", *conn, "tools/call", "whoami"], env=env,
                               stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        assert after.returncode != 0 and json.loads(after.stderr)["error"]["code"] == "auth_required", after
    finally:
        subprocess.run([str(inspector), "daemon", "stop"], env=env, capture_output=True, timeout=30)


def test_the_facade_refreshes_the_provider_token_at_the_provider(world: dict[str, Any]) -> None:
    """The provider's token goes stale (31 s tokens, refreshed 30 s ahead): the facade refreshes
    it at oidc-provider (which rotates its refresh tokens), and the provider accepts the new one."""
    browser = Browser()

    async def flow() -> tuple[str, str, str]:
        async with Client(world["url"], auth=sign_in(browser, MemoryTokenStore())) as client:
            first = (await client.call_tool("provider_token_fingerprint", {})).text
            deadline = time.monotonic() + 20
            second = first
            while second == first and time.monotonic() < deadline:  # poll: stale after 1 s
                await asyncio.sleep(0.25)
                second = (await client.call_tool("provider_token_fingerprint", {})).text
            used = (await client.call_tool("provider_userinfo", {})).text
            return first, second, used

    first, second, used = asyncio.run(asyncio.wait_for(flow(), 60))
    assert second != first, "the provider token was never refreshed"
    assert used == "userinfo says alice"  # the refreshed token works at the provider
    assert not browser.errors and len(browser.visits) == 1
