"""Both halves of rondo's authorization against each other, through a real authorization
server: rondo.Client with OAuth signs in to a server protected by rondo.auth (discovery from the
401, registration, PKCE with resource, a verified JWT), steps up on 403 and completes MRTR."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from rondo.client import Client, LoopbackRedirect, MemoryTokenStore, OAuth
from tests.authserver.fixture import AuthServer
from tests.helpers.auth_live import free_port
from tests.helpers.processes import end

pytestmark = pytest.mark.slow
HERE = Path(__file__).resolve().parents[1]


def _browser(visits: list[str]):  # type: ignore[no-untyped-def]
    def visit(url: str) -> None:  # the AS approves at once; follow it to the loopback listener
        visits.append(url)
        threading.Thread(target=lambda: httpx.get(url, follow_redirects=True, timeout=10),
                         daemon=True).start()
    return visit


def test_rondo_client_signs_in_to_a_rondo_auth_server_and_completes_mrtr() -> None:
    with AuthServer.start() as authority:
        authority.wait_ready()
        port = free_port()
        proc = subprocess.Popen([sys.executable, str(HERE / "helpers" / "rondo_protected_server.py"),
                                 authority.issuer, str(port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            metadata = f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
            deadline = time.monotonic() + 20
            while True:
                try:
                    if httpx.get(metadata).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
                assert time.monotonic() < deadline, "protected rondo server did not start"
                time.sleep(0.1)
            url = f"http://127.0.0.1:{port}/mcp"
            visits: list[str] = []
            auth = OAuth(redirect=LoopbackRedirect(announce=_browser(visits), open_browser=False,
                                                   timeout=20), store=MemoryTokenStore())

            async def flow() -> tuple[str, str]:
                accept = {"action": "accept", "content": {"title": "T"}}
                async with Client(url, auth=auth, on_elicit=lambda r: accept) as client:
                    who = (await client.call_tool("whoami", {})).text
                    note = (await client.call_tool("write_note", {"text": "hi"})).text
                    return who, note

            who, note = asyncio.run(asyncio.wait_for(flow(), 60))
        finally:
            end(proc, 5)
    assert who.startswith("sub=") and who != "sub=None"
    assert note == "wrote T: hi"  # 403 insufficient_scope, step-up, then an MRTR round
    assert len(visits) == 2  # the first sign-in and the step-up
    first, second = (httpx.URL(v).params for v in visits)
    assert first["resource"] == url and first["code_challenge_method"] == "S256"
    assert {"mcp:use", "files:write"} <= set(second["scope"].split())
