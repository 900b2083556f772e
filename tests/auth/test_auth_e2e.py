"""End to end: real clients (the official TypeScript client 2.4.0 and the Inspector CLI mcpdo
2.12.0) sign in through the real authorization server and complete an
MRTR flow on a protected rondo server over uvicorn (tests/authserver/protected_app.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import rondo
from tests.authserver.fixture import AuthServer

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1].parent
NODE = ROOT / ".cache" / "node" / "node_modules" / "node" / "bin" / "node"


@pytest.fixture(scope="module")
def auth() -> Iterator[AuthServer]:
    with AuthServer.start() as server:
        yield server


@pytest.fixture
def protected(auth: AuthServer, free_port: int) -> Iterator[str]:
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "authserver" / "protected_app.py"),
                             str(free_port), auth.issuer],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{free_port}/mcp"
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            try:
                httpx.get(f"http://127.0.0.1:{free_port}/.well-known/oauth-protected-resource/mcp", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def test_the_official_typescript_client_signs_in_and_completes_an_mrtr_flow(protected):
    assert (ROOT / "interop" / "node_modules" / "@modelcontextprotocol" / "client").is_dir(), \
        "interop/node_modules missing: run bash interop/run.sh once (npm ci --ignore-scripts)"
    out = subprocess.run([str(NODE), str(ROOT / "interop" / "ts_auth_check.mjs"), protected],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "NODE_NO_WARNINGS": "1"})
    assert out.returncode == 0, out.stdout + out.stderr
    lines = [line for line in out.stdout.splitlines() if line.startswith("ok - ")]
    assert len(lines) == 4, out.stdout
    assert "MRTR flow" in lines[2] and "step-up" in lines[3]


# The Inspector CLI the interop checks pin (interop/package.json): one install for both.
INSPECTOR = ROOT / "interop" / "node_modules" / ".bin" / "mcpdo"


def test_the_inspector_cli_signs_in_and_completes_an_mrtr_flow(protected, tmp_path):
    """mcpdo (MCP Inspector 2.12.0): connect -> pendingAuth -> the user's consent (we follow the
    AS's redirect to mcpdo's own loopback callback) -> tools/call with an elicitation answered
    through `elicitation/respond`."""
    import json
    from urllib.parse import quote

    assert INSPECTOR.exists(), "interop/node_modules not installed: run bash scripts/setup.sh"
    env = {**os.environ, "HOME": str(tmp_path), "MCP_INSPECTOR_SECRET_STORE": "file",
           "NODE_NO_WARNINGS": "1",
           "PATH": f"{NODE.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    exports = subprocess.run([str(INSPECTOR), "private"], env=env, capture_output=True, text=True,
                             check=True, timeout=30).stdout
    for line in exports.splitlines():  # export NAME='value'
        name, _, value = line.removeprefix("export ").partition("=")
        env[name] = value.strip("'")

    def mcpdo(*args: str) -> dict:
        out = subprocess.run([str(INSPECTOR), "--format", "json", *args], env=env,
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stdout + out.stderr
        return json.loads(out.stdout)

    try:
        connected = mcpdo("connect", protected, "--era", "modern")
        assert connected["pendingAuth"] is True
        auth_url = connected["authUrl"]
        assert "resource=" + quote(protected, safe="") in auth_url  # RFC 8707
        consent = httpx.get(auth_url, follow_redirects=False, timeout=10)
        assert consent.status_code == 302
        callback = httpx.get(consent.headers["location"], timeout=10)  # mcpdo's own listener
        assert callback.status_code == 200
        conn = ("--connection", protected)
        shown = mcpdo(*conn, "connections/show")
        assert shown["protocolEra"] == "modern" and shown["auth"]["authorized"] is True
        who = mcpdo(*conn, "tools/call", "whoami")
        assert who["content"][0]["text"].startswith("johndoe via client-")
        pending = mcpdo(*conn, "tools/call", "greet")["elicitationPending"]
        assert pending["message"] == "Your name?" and pending["origin"] == "input-required"
        done = mcpdo(*conn, "elicitation/respond", pending["elicitationId"], "name:=Ada")
        assert done["content"][0]["text"] == "hello Ada (johndoe)"
        # The token lacks files:write, and the list it sees hides `write` (list_filter="hide").
        listed = mcpdo(*conn, "tools/list")
        assert sorted(t["name"] for t in listed["tools"]) == ["greet", "whoami"]
    finally:
        subprocess.run([str(INSPECTOR), "daemon", "stop"], env=env, capture_output=True, timeout=30)


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
def test_rondo_client_with_a_token_from_the_token_endpoint(protected, auth, protocol):
    """rondo's own client, both eras, with an access token the AS issued at its token endpoint
    (client_credentials, RFC 8707 resource). The OAuth flow in rondo's client is a separate
    issue; this leg pins the server side against it: bearer on every request, MRTR, 403."""
    import asyncio

    from rondo.client import Client, ElicitRequest

    issued = httpx.post(f"{auth.issuer}/token", data={
        "grant_type": "client_credentials", "client_id": "rondo-e2e", "scope": "mcp:use",
        "resource": protected}, timeout=10).json()
    token = issued["access_token"]

    def answer(request: ElicitRequest) -> dict:
        return {"action": "accept", "content": {"name": "Bo"}}

    async def flow() -> tuple[str, str, Any]:
        async with Client(protected, protocol=protocol, on_elicit=answer,
                          headers={"Authorization": f"Bearer {token}"}) as client:
            who = (await client.call_tool("whoami")).text
            greeted = (await client.call_tool("greet")).text
            try:
                await client.call_tool("write", {"path": "x"})
                refused: Any = None
            except Exception as exc:  # the 403 surfaces as an error, never a result
                refused = exc
            return who, greeted, refused

    who, greeted, refused = asyncio.run(flow())
    assert who == "None via rondo-e2e"  # a client acting for itself: no sub, its client_id
    assert greeted == "hello Bo (None)"
    # rondo's client reads the 403's JSON-RPC body (no step-up yet: the client issue's part).
    assert isinstance(refused, rondo.McpError) and refused.code == -32600
    assert refused.data == {"requiredScopes": ["mcp:use", "files:write"]}
