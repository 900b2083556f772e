"""The Redis change bus against a real redis-server, including a Redis restart mid-stream."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import time

import pytest

from rondo.fleet.redis_bus import RedisBus
from tests.helpers import fleet_parts

pytestmark = pytest.mark.slow


def start_redis(port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([fleet_parts.need("redis-server"), "--port", str(port), "--bind",
                             "127.0.0.1", "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            import redis

            if redis.Redis(port=port, socket_timeout=0.5).ping():
                return proc
        except Exception:
            time.sleep(0.05)
    proc.kill()
    raise AssertionError("redis-server did not start")


def test_the_bus_delivers_across_buses_and_survives_a_redis_restart(caplog):
    caplog.set_level(logging.WARNING, "rondo.fleet")
    port = fleet_parts.free_port()
    url = f"redis://127.0.0.1:{port}/0"
    redis_proc = start_redis(port)

    async def main() -> list[tuple[str, str]]:
        nonlocal redis_proc
        got: list[tuple[str, str]] = []
        here, there = RedisBus(url=url, channel="t"), RedisBus(url=url, channel="t")
        other = RedisBus(url=url, channel="another-server")
        here.attach(lambda kind, payload: got.append((kind, payload)))
        there.attach(lambda kind, payload: None)
        other.attach(lambda kind, payload: None)
        await here.start()
        try:
            there.publish("list_changed", "tools")
            other.publish("list_changed", "prompts")  # another channel: not ours
            there._client.publish("t", b'{"k": "list_changed", "p": "evil"}')  # dropped
            there._client.publish("t", b"not json")  # dropped
            there.publish("resource_updated", "file:///a")
            await wait_for(lambda: ("resource_updated", "file:///a") in got)
            redis_proc.kill()
            redis_proc.wait()
            await asyncio.sleep(0.3)
            redis_proc = start_redis(port)
            for _ in range(50):  # the reader reconnects and resubscribes by itself
                there.publish("list_changed", "resources")
                await asyncio.sleep(0.1)
                if ("list_changed", "resources") in got:
                    break
        finally:
            await here.stop()
        return got

    async def wait_for(condition, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, "not delivered"
            await asyncio.sleep(0.02)

    try:
        got = asyncio.run(main())
    finally:
        redis_proc.kill()
        redis_proc.wait()
    assert got[:2] == [("list_changed", "tools"), ("resource_updated", "file:///a")]
    assert ("list_changed", "resources") in got
    assert all(payload != "evil" and payload != "prompts" for _, payload in got)
    assert "Redis bus read failed" in caplog.text


def test_a_bus_that_is_not_started_still_delivers_here():
    port = fleet_parts.free_port()
    redis_proc = start_redis(port)
    try:
        bus = RedisBus(url=f"redis://127.0.0.1:{port}/0")
        got: list[tuple[str, str]] = []
        bus.attach(lambda kind, payload: got.append((kind, payload)))
        bus.publish("list_changed", "tools")  # e.g. a stdio server: no lifespan starts it
        assert got == [("list_changed", "tools")]
    finally:
        redis_proc.kill()
        redis_proc.wait()


def test_a_stalled_redis_does_not_freeze_the_worker(caplog):
    # Issue 37 item 7. Before: publish was a synchronous PUBLISH on the event loop with no
    # timeout of rondo's, so with Redis stopped (SIGSTOP: connections open, no replies) a tool
    # raising a change froze the worker for redis-py's own 5 s per PUBLISH (20 s for these four
    # touches), here until the watchdog's SIGCONT at 15 s: nothing was answered before it.
    import os
    import signal
    import threading

    import rondo
    from rondo.fleet import use_bus
    from rondo.testing import connect
    from tests.helpers.helpers_core import request

    caplog.set_level(logging.WARNING, "rondo.fleet")
    port = fleet_parts.free_port()
    redis_proc = start_redis(port)
    server = rondo.Server("stall")
    bus = RedisBus(url=f"redis://127.0.0.1:{port}/0", channel="stall", timeout=0.5)
    use_bus(server, bus)

    @server.tool
    async def touch(uri: str) -> str:
        """Mark a resource changed."""
        server.notify_resource_updated(uri)
        return "touched"

    @server.tool
    async def ping() -> str:
        """Answer at once."""
        return "pong"

    resumed = threading.Event()

    def watchdog() -> None:  # never leave Redis stopped, even when the worker is frozen
        resumed.set()
        os.kill(redis_proc.pid, signal.SIGCONT)

    timer = threading.Timer(15.0, watchdog)

    async def main() -> tuple[list[dict], dict, bool]:
        await bus.start()
        conn = connect(server)
        try:
            os.kill(redis_proc.pid, signal.SIGSTOP)
            timer.start()
            touches = [asyncio.ensure_future(conn.send(request(
                "tools/call", {"name": "touch", "arguments": {"uri": f"file:///{i}"}}, id=i)))
                for i in range(4)]
            touched = await asyncio.gather(*touches)
            pong = await conn.send(request("tools/call", {"name": "ping", "arguments": {}}, id=9))
            answered_while_stopped = not resumed.is_set()
            return touched, pong, answered_while_stopped
        finally:
            timer.cancel()
            os.kill(redis_proc.pid, signal.SIGCONT)
            await bus.stop()

    try:
        touched, pong, answered_while_stopped = asyncio.run(main())
    finally:
        redis_proc.kill()
        redis_proc.wait()
    assert answered_while_stopped, "the worker answered nothing until Redis came back"
    assert pong["result"]["content"][0]["text"] == "pong"
    assert [t["result"]["content"][0]["text"] for t in touched] == ["touched"] * 4


def test_the_publish_queue_is_bounded_and_changes_beyond_it_stay_here():
    # Nothing listens on this port: every PUBLISH fails, the first after its connect timeout.
    port = fleet_parts.free_port()
    bus = RedisBus(url=f"redis://127.0.0.1:{port}/0", timeout=0.2, max_queue=2)
    got: list[tuple[str, str]] = []
    bus.attach(lambda kind, payload: got.append((kind, payload)))
    for i in range(50):
        bus.publish("resource_updated", f"file:///{i}")
    # Unsubscribed: every change reached this worker at once, whatever Redis does.
    assert got == [("resource_updated", f"file:///{i}") for i in range(50)]
    assert bus.pending() <= 2
    deadline = time.monotonic() + 10
    while bus.lost < 50:  # queued ones fail against the missing Redis; the rest never fitted
        assert time.monotonic() < deadline, f"only {bus.lost} changes were counted lost"
        time.sleep(0.02)
    with pytest.raises(ValueError, match="max_queue"):
        RedisBus(url="redis://127.0.0.1:1/0", max_queue=0)
    with pytest.raises(ValueError, match="timeout"):
        RedisBus(url="redis://127.0.0.1:1/0", timeout=0)
