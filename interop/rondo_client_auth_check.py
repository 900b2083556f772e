"""rondo's client signs in to a protected server written with the official TypeScript server
(interop/ts_protected_server.mjs, @modelcontextprotocol/server 2.4.0 and its resource-server
helpers), against a real authorization server (tests/authserver, oauth2-mock-server), and
completes an MRTR flow after a step-up.

    python interop/rondo_client_auth_check.py --node PATH_TO_NODE
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import threading
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from rondo.client import Client, LoopbackRedirect, MemoryTokenStore, OAuth  # noqa: E402
from tests.authserver.fixture import AuthServer  # noqa: E402


def browser(visits: list[str]):
    def open_url(url: str) -> None:  # the user approves: the AS redirects to the loopback listener
        visits.append(url)
        threading.Thread(target=lambda: httpx.get(url, follow_redirects=True, timeout=10), daemon=True).start()
    return open_url


async def check(url: str) -> None:
    visits: list[str] = []
    auth = OAuth(redirect=LoopbackRedirect(announce=browser(visits), open_browser=False, timeout=20),
                 store=MemoryTokenStore())
    answer = {"action": "accept", "content": {"confirmed": True}}
    async with Client(url, auth=auth, on_elicit=lambda request: answer, timeout=30) as client:
        assert client.era == "modern", client.era
        who = await client.call_tool("whoami", {})
        assert who.text == "sub=johndoe", who.text
        print("ok sign-in: 401 from requireBearerAuth, RFC 9728 metadata, DCR, PKCE, token with aud = resource")
        assert len(visits) == 1 and httpx.URL(visits[0]).params["resource"] == url
        result = await client.call_tool("confirm_action", {"action": "deploy"})
        assert result.text == "confirmed deploy", result.text
        assert len(visits) == 2, visits
        assert set(httpx.URL(visits[1]).params["scope"].split()) >= {"mcp:use", "files:write"}
        print("ok step-up: 403 insufficient_scope from requireScopes, re-authorized with the union of scopes")
        print("ok MRTR: input_required answered and retried with the echoed requestState, under the new token")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--node", default="node")
    args = parser.parse_args()
    with AuthServer.start() as auth:
        auth.wait_ready()
        proc = subprocess.Popen([args.node, str(ROOT / "interop" / "ts_protected_server.mjs"), auth.issuer],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            if not url.startswith("http://"):
                raise SystemExit("the TypeScript server did not start")
            asyncio.run(asyncio.wait_for(check(url), 90))
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
