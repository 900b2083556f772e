"""A facade-issued token against a third-party JWT, in one run: HTTP `add` through the ASGI
app without sockets, and the verification itself.

    .venv/bin/python benchmarks/auth_facade_inprocess.py

Third party: an RS256 JWT minted by the test authorization server (`tests/authserver`,
oauth2-mock-server on loopback), checked by `JwtVerifier` (its JWKS fetched once). Facade: an
RS256 JWT from `rondo.auth.facade.Facade` (a sign-in against a scripted provider), checked by
`FacadeVerifier` (signature, then the store: revoked? the grant's identity). Rows: a cached
call (the verified-token cache, what a client reusing its token pays), and `verify()` alone
(what a cache miss pays: once per token for a JWT, once per `verify_ttl` for the facade).
Microseconds, best of 7 rounds.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from inprocess import ADD, scope  # noqa: E402

import rondo  # noqa: E402
from rondo.auth import JwtVerifier, ResourceServer  # noqa: E402
from tests.authserver.fixture import AuthServer  # noqa: E402
from tests.helpers.facade_world import World  # noqa: E402

RESOURCE = "https://mcp.example.com/mcp"


def serve(auth: ResourceServer) -> Any:
    server = rondo.Server("auth-facade-bench", "1.0.0", auth=auth, state=None, warn_undocumented=False)

    @server.tool
    def add(a: int, b: int) -> str:
        return str(a + b)

    return server.asgi(allowed_hosts=None)


async def call(app: Any, token: str) -> bytes:
    sent: list[bytes] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": ADD, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            sent.append(message.get("body", b""))

    request = scope("add")
    request["headers"] = [*request["headers"], (b"authorization", f"Bearer {token}".encode())]
    request["path"] = "/mcp"
    await app(request, receive, send)
    return b"".join(sent)


async def main(auth_server: AuthServer) -> None:
    third_party = auth_server.mint(aud=RESOURCE, sub="alice", scope="mcp")
    jwt_rs = ResourceServer(resource=RESOURCE, issuer=auth_server.issuer,
                            verifier=JwtVerifier(auth_server.issuer, RESOURCE))
    world = World()
    facade_token = (await world.sign_in())["access_token"]
    facade_rs = world.facade.resource_server(clock=time.time)  # the default clock, as in production
    facade_app = serve(facade_rs)
    jwt_app = serve(jwt_rs)
    assert b'"text":"3"' in await call(jwt_app, third_party)
    assert b'"text":"3"' in await call(facade_app, facade_token)
    tests = {
        "cached call, third-party JWT": (lambda: call(jwt_app, third_party), 5_000),
        "cached call, facade token": (lambda: call(facade_app, facade_token), 5_000),
        "verify(), third-party RS256 JWT": (lambda: jwt_rs.verifier.verify(third_party), 1_000),
        "verify(), facade RS256 token": (lambda: facade_rs.verifier.verify(facade_token), 1_000),
    }
    rows = {label: float("inf") for label in tests}
    for _ in range(7):  # rounds interleaved: a noisy neighbour hits every row alike
        for label, (fn, n) in tests.items():
            start = time.perf_counter()
            for _ in range(n):
                await fn()
            rows[label] = min(rows[label], (time.perf_counter() - start) / n * 1e6)
    for label, us in rows.items():
        print(f"{label:34s} {us:8.2f} us")


if __name__ == "__main__":
    with AuthServer.start() as auth:
        auth.wait_ready()
        asyncio.run(main(auth))
