"""A real OAuth authorization server for tests, on a free loopback port.

    from tests.authserver.fixture import AuthServer
    with AuthServer.start() as auth:
        auth.issuer                                  # "http://127.0.0.1:PORT"
        token = auth.mint(aud="http://127.0.0.1:8000/mcp", scope="files:read")
        auth.mint(expires_in=-60)                    # expired; any claim can be overridden,
        auth.mint(iss=None)                          # None removes a claim
        auth.rotate()                                # a new signing key (new kid) in the JWKS
        auth.ghost()                                 # signed by a key the JWKS never had
        auth.revoke(token)                           # introspection now says inactive

It is `oauth2-mock-server` (npm, pinned in package.json next to this file, installed by
scripts/setup.sh) wrapped by server.mjs: OIDC discovery, JWKS, /authorize (auto-approves),
/token (PKCE; RFC 8707 `resource` becomes `aud`; RFC 8693 token exchange once `sts(...)` says
who may), /register, /introspect, /revoke. Tokens
default to `sub: "alice"`, an hour's lifetime, no `aud` unless given.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.helpers.processes import end

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
NODE = ROOT / ".cache" / "node" / "node_modules" / "node" / "bin" / "node"
SCRIPT = HERE / "server.mjs"


class AuthServer:
    def __init__(self, proc: subprocess.Popen[str], issuer: str) -> None:
        self.proc = proc
        self.issuer = issuer
        self._http = httpx.Client(base_url=issuer, timeout=10)

    @classmethod
    @contextmanager
    def start(cls, port: int = 0) -> Iterator[AuthServer]:
        """Start the server (port 0: any free one), yield it, stop it."""
        if not (HERE / "node_modules" / "oauth2-mock-server").is_dir():
            raise RuntimeError("tests/authserver is not installed: run bash scripts/setup.sh")
        node = str(NODE) if NODE.exists() else "node"
        proc = subprocess.Popen(
            [node, str(SCRIPT), str(port)],
            cwd=HERE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "NODE_NO_WARNINGS": "1"},
        )
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"authorization server did not start: {proc.stderr.read() if proc.stderr else ''}")
            server = cls(proc, json.loads(line)["issuer"])
            try:
                yield server
            finally:
                server._http.close()
        finally:
            end(proc, 5)

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        response = self._http.post(path, json=body)
        response.raise_for_status()
        return response.json()

    def mint(self, *, expires_in: int = 3600, kid: str | None = None, **claims: Any) -> str:
        """A signed access token; `claims` override the defaults (None removes one)."""
        body: dict[str, Any] = {"expiresIn": expires_in, "claims": claims}
        if kid is not None:
            body["kid"] = kid
        return str(self._post("/_control/mint", body)["token"])

    def rotate(self) -> str:
        """Add a new signing key; tokens minted from now on use it. Returns its kid."""
        return str(self._post("/_control/rotate", {})["kid"])

    def ghost(self, **claims: Any) -> str:
        """A token signed by a key that was never in the JWKS (unknown kid)."""
        return str(self._post("/_control/ghost", {"claims": claims})["token"])

    def sts(self, *, clients: dict[str, str], targets: list[str], expires_in: int = 300) -> None:
        """Configure RFC 8693 token exchange at /token: who may exchange (client id -> secret)
        and for which targets (`resource` or `audience` values); resets the exchange count."""
        self._post("/_control/sts", {"clients": clients, "targets": targets, "expiresIn": expires_in})

    def exchanges(self) -> int:
        """How many token-exchange requests /token has answered since `sts(...)`."""
        return int(self._http.get("/_control/sts").json()["exchanges"])

    def revoke(self, token: str) -> None:
        self._http.post("/revoke", data={"token": token}).raise_for_status()

    def jwks(self) -> dict[str, Any]:
        return dict(self._http.get("/jwks").json())

    def wait_ready(self, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self._http.get("/.well-known/openid-configuration").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise RuntimeError("authorization server not ready")
