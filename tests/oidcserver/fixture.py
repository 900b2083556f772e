"""A real OpenID Connect provider on loopback for the facade's live tests.

    with OidcServer.start(redirect_uris=["http://127.0.0.1:PORT/callback"]) as idp:
        idp.issuer            # "http://127.0.0.1:PORT2"
        idp.next_user("bob")  # who the automated sign-in signs in next

It is node `oidc-provider` (pinned in package.json next to this file, installed by
scripts/setup.sh) run by server.mjs with ONE static confidential client (`rondo-facade`,
secret `facade-secret-at-the-idp`) and dynamic registration disabled; its login and consent
interactions are automated (the user set by `next_user`, default alice, grants what is asked).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.helpers.processes import end

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
NODE = ROOT / ".cache" / "node" / "node_modules" / "node" / "bin" / "node"
CLIENT_ID = "rondo-facade"
CLIENT_SECRET = "facade-secret-at-the-idp"


class OidcServer:
    def __init__(self, proc: subprocess.Popen[str], issuer: str) -> None:
        self.proc = proc
        self.issuer = issuer

    @classmethod
    @contextmanager
    def start(cls, *, redirect_uris: list[str], access_ttl: int = 600) -> Iterator[OidcServer]:
        if not (HERE / "node_modules" / "oidc-provider").is_dir():
            raise RuntimeError("tests/oidcserver is not installed: run bash scripts/setup.sh")
        node = str(NODE) if NODE.exists() else "node"
        config: dict[str, Any] = {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
                                  "redirect_uris": redirect_uris, "access_ttl": access_ttl}
        proc = subprocess.Popen([node, str(HERE / "server.mjs"), json.dumps(config)], cwd=HERE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                env={**os.environ, "NODE_NO_WARNINGS": "1"})
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("oidc-provider did not start")
            yield cls(proc, json.loads(line)["issuer"])
        finally:
            end(proc)

    def next_user(self, user: str) -> None:
        httpx.post(self.issuer + "/test/next-user", json={"user": user}, timeout=5).raise_for_status()

    def sign_ins(self) -> int:
        return int(httpx.get(self.issuer + "/test/stats", timeout=5).json()["signIns"])
