"""The bridge's stdio process pool, its supervision rules without processes
(gateway/bridge/pool.py): fake clients whose start fails or whose process ends on cue, so the
backoff, the give-up and the steady reset are checked exactly. The real-process behaviour is in
tests/gateway/test_bridge_stdio.py."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from rondo.gateway.bridge.pool import Pool
from rondo.gateway.supervise import Restart
from rondo.wire.errors import McpError


class FakeTransport:
    def __init__(self) -> None:
        self.ended = asyncio.Event()

    async def wait_ended(self) -> None:
        await self.ended.wait()


class FakeClient:
    def __init__(self) -> None:
        self.transport = FakeTransport()
        self.closed = False
        self.pong = asyncio.Event()
        self.pings = 0

    async def request(self, method: str, params: Any) -> Any:
        assert method == "ping"
        self.pings += 1
        await self.pong.wait()
        return {}

    async def close(self) -> None:
        self.closed = True


class Link:
    def __init__(self, restart: Restart, timeout: float = 5.0) -> None:
        self.restart = restart
        self.timeout = timeout
        self.label = "fake"


class Harness:
    def __init__(self, restart: Restart, *, failing: bool = False, size: int = 2) -> None:
        self.made: list[FakeClient] = []
        self.connects: list[float] = []
        self.failing = failing
        self.pool = Pool(Link(restart), self.make, self.connect, size=size)  # type: ignore[arg-type]

    def make(self, declared: dict[str, Any], key: str) -> Any:
        client = FakeClient()
        self.made.append(client)
        return client

    async def connect(self, client: Any) -> None:
        self.connects.append(time.monotonic())
        if self.failing:
            raise McpError(-32603, "upstream unavailable")


def test_failed_starts_back_off_and_the_pool_gives_up_after_attempts() -> None:
    harness = Harness(Restart(first=0.2, most=0.2, attempts=3, steady=60), failing=True)

    async def go() -> None:
        for _ in range(3):
            with pytest.raises(McpError, match="upstream unavailable"):
                await harness.pool.acquire("{}", {})
        gaps = [b - a for a, b in zip(harness.connects, harness.connects[1:], strict=False)]
        assert len(gaps) == 2 and all(gap >= 0.18 for gap in gaps)  # Restart.delay between
        started = time.monotonic()
        with pytest.raises(McpError, match="upstream unavailable"):
            await harness.pool.acquire("{}", {})
        assert time.monotonic() - started < 0.1  # given up: answered at once
        assert len(harness.connects) == 3  # and no fourth start

    asyncio.run(go())


async def _until(check: Any) -> None:
    deadline = time.monotonic() + 5
    while not check():
        assert time.monotonic() < deadline
        await asyncio.sleep(0.01)


def test_a_process_that_ends_soon_counts_as_a_failed_start() -> None:
    """An idle process whose transport ends within `steady` is dropped from the pool at once
    and the next start waits the backoff; with `steady=0` an end resets the count instead."""
    async def go(steady: float) -> float:
        harness = Harness(Restart(first=0.3, most=0.3, attempts=5, steady=steady))
        key, client = await harness.pool.acquire("{}", {})
        harness.pool.release(key)
        assert harness.pool.processes == 1
        client.transport.ended.set()  # type: ignore[attr-defined]
        await _until(lambda: harness.pool.processes == 0 and harness.made[0].closed)
        started = time.monotonic()
        await harness.pool.acquire("{}", {})
        return time.monotonic() - started

    assert asyncio.run(go(60)) >= 0.28
    assert asyncio.run(go(0)) < 0.2


def test_idle_processes_are_reused_per_capability_set_and_evicted_when_full() -> None:
    harness = Harness(Restart(), size=2)

    async def go() -> None:
        a, client_a = await harness.pool.acquire("A", {})
        b, _ = await harness.pool.acquire("B", {})
        harness.pool.release(a)
        harness.pool.release(b)
        again, client = await harness.pool.acquire("A", {})
        assert client is client_a  # the idle process of the same capability set
        c, _ = await harness.pool.acquire("C", {})  # full: B's idle process retired for C
        assert len(harness.made) == 3 and harness.pool.processes == 2
        await _until(lambda: harness.made[1].closed)
        harness.pool.release(again)
        harness.pool.release(c, broken=True)  # a failed call's process is let go
        assert harness.pool.processes == 1
        await harness.pool.close()
        assert all(made.closed for made in harness.made)

    asyncio.run(go())


def test_a_full_pool_waits_for_a_process_then_refuses() -> None:
    harness = Harness(Restart(), size=1)
    harness.pool.link.timeout = 0.3  # type: ignore[misc]

    async def go() -> None:
        key, _ = await harness.pool.acquire("A", {})
        started = time.monotonic()
        with pytest.raises(McpError, match="all 1 upstream processes") as caught:
            await harness.pool.acquire("A", {})
        assert caught.value.code == -32000
        assert 0.25 < time.monotonic() - started < 2
        waiter = asyncio.ensure_future(harness.pool.acquire("A", {}))
        await _until(lambda: harness.pool.waiting == 1)  # blocked on the full pool
        harness.pool.release(key)  # freed: the waiting call gets it
        got, _ = await asyncio.wait_for(waiter, 2)
        assert got == key and harness.pool.waiting == 0 and len(harness.made) == 1

    asyncio.run(go())


def test_a_cancelled_calls_process_idles_only_after_a_ping_round_trip() -> None:
    """`release(settle=True)` (the call was cancelled): the process is in no call and not idle
    until its ping is answered (a question in flight from the cancelled call arrives before
    the pong and finds no call); it still counts against the bound; then it idles. With
    `settle=False` it idles at once, no ping."""
    harness = Harness(Restart(), size=1)
    harness.pool.link.timeout = 2  # type: ignore[misc]

    async def go() -> None:
        key, client = await harness.pool.acquire("A", {})
        harness.pool.release(key, settle=True)
        await _until(lambda: harness.made[0].pings == 1)
        assert harness.pool.processes == 1  # settling: counted, not lent out
        waiter = asyncio.ensure_future(harness.pool.acquire("A", {}))
        await _until(lambda: harness.pool.waiting == 1)  # the settling process is not lent
        assert not waiter.done()
        harness.made[0].pong.set()
        got, again = await asyncio.wait_for(waiter, 2)
        assert again is client and got == key
        harness.pool.release(got)
        assert harness.made[0].pings == 1 and harness.pool.processes == 1

    asyncio.run(go())


def test_a_cancelled_calls_process_that_does_not_answer_the_ping_is_let_go() -> None:
    harness = Harness(Restart(), size=1)
    harness.pool.link.timeout = 0.2  # type: ignore[misc]

    async def go() -> None:
        key, _ = await harness.pool.acquire("A", {})
        harness.pool.release(key, settle=True)
        await _until(lambda: harness.made[0].closed and harness.pool.processes == 0)
        harness.pool.link.timeout = 2  # type: ignore[misc]
        _, fresh = await harness.pool.acquire("A", {})
        assert fresh is harness.made[1]

    asyncio.run(go())


def test_a_failed_start_wakes_a_call_waiting_for_its_place() -> None:
    """A call waiting on a full pool whose one place was a start that failed starts its own
    process at once instead of waiting the upstream's timeout out and hearing 'all busy'."""
    gate = asyncio.Event()
    harness = Harness(Restart(first=0.01, most=0.01, attempts=5, steady=60), size=1)

    async def connect(client: Any) -> None:
        harness.connects.append(time.monotonic())
        if len(harness.connects) == 1:
            await gate.wait()
            raise McpError(-32603, "upstream unavailable")

    harness.pool._connect = connect
    harness.pool.link.timeout = 5  # type: ignore[misc]

    async def go() -> None:
        first = asyncio.ensure_future(harness.pool.acquire("A", {}))
        await _until(lambda: len(harness.connects) == 1)
        second = asyncio.ensure_future(harness.pool.acquire("A", {}))
        await _until(lambda: harness.pool.waiting == 1)
        started = time.monotonic()
        gate.set()
        with pytest.raises(McpError, match="upstream unavailable"):
            await first
        key, client = await asyncio.wait_for(second, 2)
        assert client is harness.made[1] and time.monotonic() - started < 1

    asyncio.run(go())


def test_no_process_outlives_a_closed_pool() -> None:
    """Closing the pool (the proxy stopping) while a process is starting and a call waits:
    the started process is closed, not lent or idled; the waiting call and any later one are
    refused at once; a call that ends after the close lets its process go."""
    gate = asyncio.Event()
    harness = Harness(Restart(), size=2)
    harness.pool.link.timeout = 5  # type: ignore[misc]

    async def connect(client: Any) -> None:
        harness.connects.append(time.monotonic())
        if len(harness.connects) == 2:
            await gate.wait()

    harness.pool._connect = connect

    async def go() -> None:
        key, busy = await harness.pool.acquire("A", {})
        starting = asyncio.ensure_future(harness.pool.acquire("B", {}))
        await _until(lambda: len(harness.connects) == 2)
        waiting = asyncio.ensure_future(harness.pool.acquire("C", {}))
        await _until(lambda: harness.pool.waiting == 1)
        await harness.pool.close()
        started = time.monotonic()
        with pytest.raises(McpError, match="the proxy is closing"):
            await waiting
        assert time.monotonic() - started < 1
        gate.set()
        with pytest.raises(McpError, match="the proxy is closing"):
            await starting
        with pytest.raises(McpError, match="the proxy is closing"):
            await harness.pool.acquire("A", {})
        harness.pool.release(key)
        await _until(lambda: all(made.closed for made in harness.made))
        assert len(harness.made) == 2 and harness.pool.processes == 0

    asyncio.run(go())
