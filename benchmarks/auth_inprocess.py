"""What a bearer token costs in process: HTTP `add` through the ASGI app, without sockets.

    .venv/bin/python benchmarks/auth_inprocess.py

Three apps side by side, in rounds: no auth and no token, no auth and an 800-byte token nothing
reads, and a `ResourceServer` whose stub verifier accepts that token (after the first request it
comes from the verified-token cache, as in `bench_auth.py`). Microseconds per request, best
round; hot caches, so a real server's figures are larger (`bench_auth.py` measures those).
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from inprocess import ADD, scope  # noqa: E402

import rondo  # noqa: E402
from rondo.auth import Principal, ResourceServer  # noqa: E402
from rondo.transport.http import HttpApp  # noqa: E402

ISSUER = "http://127.0.0.1:9/"
TOKEN = (b"authorization", b"Bearer " + b"e" * 800)


class StubVerifier:
    cache_ttl = 600.0

    async def verify(self, token: str) -> Principal:
        return Principal.from_claims({"sub": "alice", "iss": ISSUER, "scope": "mcp:use",
                                      "exp": time.time() + 3600})


def app(guarded: bool) -> HttpApp:
    auth = (ResourceServer(resource="http://127.0.0.1:8000/mcp", issuer=ISSUER,
                           verifier=StubVerifier(), required_scopes=["mcp:use"])
            if guarded else None)
    server = rondo.Server("auth-inprocess", "1.0.0", auth=auth, state=None,
                          warn_undocumented=False)

    @server.tool
    def add(a: int, b: int) -> str:
        return str(a + b)

    return HttpApp(server)


async def call(target: HttpApp, extra: list[tuple[bytes, bytes]]) -> bytes:
    sent: list[bytes] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": ADD, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            sent.append(message.get("body", b""))

    request = scope("add")
    request["headers"] = request["headers"] + extra
    await target(request, receive, send)
    return b"".join(sent)


async def main() -> None:
    rows = [("no auth, no token", app(False), []), ("no auth, unread token", app(False), [TOKEN]),
            ("auth, cached token", app(True), [TOKEN])]
    best = {label: float("inf") for label, _, _ in rows}
    for _, target, extra in rows:
        assert b'"text":"3"' in await call(target, extra)
    for _ in range(7):
        for label, target, extra in rows:
            start = time.perf_counter()
            for _ in range(10_000):
                await call(target, extra)
            best[label] = min(best[label], (time.perf_counter() - start) / 10_000 * 1e6)
    for label, us in best.items():
        print(f"{label:24s} {us:6.2f} us per request")


if __name__ == "__main__":
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(main())
