"""End to end: real clients sign in through the real authorization server and complete an
MRTR flow on a protected rondo server over uvicorn (tests/authserver/protected_app.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from authserver.fixture import AuthServer

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
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
