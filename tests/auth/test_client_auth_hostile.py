"""Hostile authorization and resource servers over real loopback sockets: rondo.Client with
OAuth must end each case with a clear exception, within a bounded time, having sent nothing
it should not (the in-memory world of auth_world.py, served by uvicorn)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

from rondo.client import (
    AuthError,
    AuthorizationDenied,
    Client,
    DiscoveryError,
    HeadlessRedirect,
    OAuth,
)
from tests.helpers.auth_live import free_port
from tests.helpers.auth_world import REDIRECT, World, asgi

pytestmark = pytest.mark.slow


class Served:
    def __init__(self) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.world = World()
        self._server = uvicorn.Server(uvicorn.Config(asgi(self), host="127.0.0.1", port=self.port,
                                                     log_level="error", timeout_graceful_shutdown=1))
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    async def handle(self, request: Any) -> Any:  # the current world answers
        return await self.world.handle(request)

    def reset(self, **knobs: Any) -> World:
        self.world = World(issuer=self.base, resource=knobs.pop("resource", self.base + "/mcp"),
                           mcp_url=self.base + "/mcp", **knobs)
        return self.world


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    s = Served()
    s._thread.start()
    deadline = time.monotonic() + 10
    while not s._server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield s
    s._server.should_exit = True
    s._thread.join(10)


def attempt(served: Served, **oauth_kwargs: Any) -> None:
    """List tools through rondo.Client, under a 15 s hang guard (the error says which bound ended
    it, so no stopwatch is needed)."""
    auth = OAuth(redirect=HeadlessRedirect(REDIRECT), timeout=oauth_kwargs.pop("timeout", 2.0), **oauth_kwargs)

    async def go() -> None:
        async with Client(served.base + "/mcp", protocol="2026-07-28", auth=auth, timeout=20) as client:
            await client.list_tools()

    asyncio.run(asyncio.wait_for(go(), 15))


@pytest.mark.parametrize(("knobs", "error", "match"), [
    ({"iss_value": "https://evil.example"}, AuthorizationDenied, "evil.example"),
    ({"iss_value": None}, AuthorizationDenied, "promises an iss"),
    ({"resource": "https://evil.example/mcp"}, DiscoveryError, "refusing to authorize"),
    ({"metadata_issuer": "https://attacker.example"}, DiscoveryError, "refusing to use it"),
    ({"always_401": True}, AuthError, "still answers 401"),
    ({"prm_huge": True}, DiscoveryError, "larger than"),
])
def test_hostile_case_is_a_clear_error(served: Served, knobs: dict[str, Any], error: type[Exception], match: str) -> None:
    world = served.reset(**knobs)
    with pytest.raises(error, match=match):
        attempt(served)
    if error is not AuthError:  # refused before any code or credential went to a token endpoint
        assert not world.seen("/token")


def test_slow_metadata_is_cut_off(served: Served) -> None:
    served.reset(prm_slow=True)
    with pytest.raises(DiscoveryError, match="within 1 s"):  # the 1 s bound, not the client's 20 s
        attempt(served, timeout=1.0)
