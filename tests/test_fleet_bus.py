"""The Redis change bus against a real redis-server, including a Redis restart mid-stream."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import time

import pytest

import fleet_parts
from rondo.fleet.redis_bus import RedisBus

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
