"""The bridge's per-call HTTP sessions (gateway/bridge/sessions.py) after close(): no session
is opened, and one that finishes connecting during the close is closed and refused, with the
stdio pool's error (-32603 'the proxy is closing', bridge/pool.py)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from rondo.gateway.bridge.sessions import Sessions
from rondo.wire.errors import McpError


class FakeClient:
    def __init__(self) -> None:
        self.closed = False

    async def close(self) -> None:
        self.closed = True


class Counted(Sessions):
    """Sessions whose per-call clients are fakes; `gate` holds their connect."""

    def __init__(self, kind: str) -> None:
        super().__init__(SimpleNamespace(kind=kind, timeout=5.0, identity="up"))  # type: ignore[arg-type]
        self.made: list[FakeClient] = []
        self.gate: asyncio.Event | None = None

    def _make(self, caps: dict[str, Any], key: str, *, logs: bool = True) -> Any:
        client = FakeClient()
        self.made.append(client)
        return client

    async def _connect(self, client: Any) -> None:
        if self.gate is not None:
            await self.gate.wait()


@pytest.mark.parametrize("kind", ["url", "command"])
def test_no_session_is_opened_after_close(kind: str) -> None:
    async def go() -> Counted:
        sessions = Counted(kind)
        await sessions.close()
        with pytest.raises(McpError, match="^upstream unavailable: the proxy is closing$") as caught:
            await sessions.client_for({})
        assert caught.value.code == -32603
        return sessions

    sessions = asyncio.run(go())
    assert sessions.made == [] and sessions.clients == {} and sessions.pool is None


def test_a_session_connected_during_close_is_closed_and_refused() -> None:
    async def go() -> None:
        sessions = Counted("url")
        sessions.gate = asyncio.Event()
        opening = asyncio.create_task(sessions.client_for({}))
        while not sessions.made:  # bounded: the task makes its client on its first step
            await asyncio.sleep(0)
        await sessions.close()
        sessions.gate.set()
        with pytest.raises(McpError, match="^upstream unavailable: the proxy is closing$"):
            await opening
        (client,) = sessions.made
        assert client.closed and sessions.clients == {}

    asyncio.run(asyncio.wait_for(go(), 5))


def test_a_session_opens_before_close() -> None:
    async def go() -> None:
        sessions = Counted("url")
        key, client = await sessions.client_for({})
        assert sessions.clients == {key: client} and not client.closed  # type: ignore[attr-defined]
        await sessions.close()
        assert client.closed and sessions.clients == {}  # type: ignore[attr-defined]

    asyncio.run(go())


def test_sessions_open_again_when_the_proxy_starts_again() -> None:
    """A proxy's lifespan runs once per start: Bridge.start() reopens its sessions, a stdio
    upstream's on a new pool (the closed one lends nothing)."""
    async def go() -> None:
        sessions = Counted("url")
        await sessions.close()
        sessions.open()
        key, client = await sessions.client_for({})
        assert sessions.clients == {key: client}
        await sessions.close()
        stdio = Counted("command")
        await stdio.close()
        stdio.pool = SimpleNamespace(_closed=True)  # type: ignore[assignment]  # as close() leaves it
        stdio.open()
        assert stdio.pool is None  # the next call makes a new pool

    asyncio.run(go())
