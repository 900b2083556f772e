"""The legacy bridge over a stdio upstream with several bridged calls open at once
(gateway/bridge/pool.py): each call runs on an upstream process of its own from a bounded
pool, so every question reaches its own call; the pool's bound, its reuse of idle processes,
and its supervision (a process that dies is noticed and replaced, its stderr logged). The
upstream is tests/helpers/bridge_upstream.py's server run over stdio as a real process,
spoken to as 2025-11-25."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import rondo
from rondo.client import Client, PendingCall
from rondo.gateway.bridge import Hold, Replay
from tests.helpers.bridge_upstream import answers

COMMAND = [sys.executable, str(Path(__file__).resolve().parents[1] / "helpers"
                                / "bridge_upstream_stdio.py")]
KEYS = rondo.StatePolicy(keys=[("k1", b"k" * 32)])
DAYS = ["Monday", "Tuesday", "Wednesday"]
SURE = {"action": "accept", "content": {"ok": True}}


BRIDGE_KEY = "bridge-key-5d1e"  # a secret in the upstream's env, printed on its stderr


def front(mode: Any, timeout: float = 20) -> rondo.Server:
    return rondo.proxy(COMMAND, upstream_protocol="2025-11-25", bridge=mode, timeout=timeout,
                       state=KEYS, env={"BRIDGE_KEY": BRIDGE_KEY})


def pool_of(server: rondo.Server) -> Any:
    [link] = {ext.link for ext in server.extensions.values() if hasattr(ext, "link")}
    return link.bridge.sessions.pool


def day(name: str) -> dict[str, Any]:
    return {"action": "accept", "content": {"day": name}}


def at(hour: int) -> dict[str, Any]:
    return {"action": "accept", "content": {"time": f"{hour}:00"}}


@pytest.mark.parametrize("mode", ["hold", "replay"])
def test_bridged_calls_open_at_once_each_get_their_own_answers(mode: str) -> None:
    """Three `book` calls begun at once, each waiting on its first question together, then
    answered with a different day and hour: each result carries its own call's answers (before
    the pool, a second open call's question was refused: the proxy could not tell whose it
    was)."""
    proxy = front(mode)

    async def go() -> None:
        async with proxy.started(), Client(proxy, protocol="2026-07-28", on_elicit=answers, timeout=30) as c:
            rooms = ["Blue", "Red", "Green"]
            firsts = await asyncio.gather(*(c.call_tool("book", {"room": room}, manual=True)
                                            for room in rooms))
            for first in firsts:
                assert isinstance(first, PendingCall)
                assert list(first.input_requests) == ["day"]
            seconds = await asyncio.gather(*(c.resume(first, {"day": day(name)}, manual=True)
                                             for first, name in zip(firsts, DAYS, strict=True)))
            for second in seconds:
                assert isinstance(second, PendingCall)
                assert list(second.input_requests) == ["time"]
            dones = await asyncio.gather(*(c.resume(second, {"time": at(hour)}, manual=True)
                                           for second, hour in zip(seconds, (9, 10, 11),
                                                                   strict=True)))
            assert [done.text for done in dones] == [
                "Blue booked for Monday at 9:00", "Red booked for Tuesday at 10:00",
                "Green booked for Wednesday at 11:00"]
            if mode == "hold":  # held at once: three processes
                assert len(pool_of(proxy).pids()) == 3

    asyncio.run(go())


def test_the_pool_is_bounded_and_reuses_idle_processes() -> None:
    """With `Hold(processes=2)`: two held calls take two processes; a third call waits for one
    up to the upstream timeout (1 s here) and gets -32000; once a held call completes, its
    process idles and serves the next call (the same pid)."""
    proxy = front(Hold(processes=2), timeout=1)

    async def go() -> None:
        async with proxy.started(), Client(proxy, protocol="2026-07-28", on_elicit=answers, timeout=30) as c:
            held = [await c.call_tool("whoami", manual=True) for _ in range(2)]
            assert all(isinstance(p, PendingCall) for p in held)
            started = time.monotonic()
            with pytest.raises(rondo.McpError, match="all 2 upstream processes") as caught:
                await c.call_tool("whoami", manual=True)
            assert caught.value.code == -32000
            assert 0.8 < time.monotonic() - started < 5
            assert isinstance(held[0], PendingCall)
            done = await c.resume(held[0], {"sure": SURE}, manual=True)
            first_pid = done.text.split()[1]
            assert done.text == f"pid {first_pid} sure=True"
            again = await c.call_tool("whoami", manual=True)
            assert isinstance(again, PendingCall)
            done = await c.resume(again, {"sure": SURE}, manual=True)
            assert done.text == f"pid {first_pid} sure=True"
            assert len(pool_of(proxy).pids()) == 2

    asyncio.run(go())


def test_a_bridge_process_that_dies_is_noticed_and_replaced(
        caplog: pytest.LogCaptureFixture) -> None:
    """The bridge's process is supervised: its stderr is logged under rondo.gateway (its env's
    values masked), it is
    killed while idle and dropped from the pool at once (before any call finds it dead), and the
    next bridged call completes on a new process (before, that call failed with -32603)."""
    caplog.set_level(logging.INFO, logger="rondo.gateway")
    proxy = front("hold")

    async def go() -> None:
        async with proxy.started(), Client(proxy, protocol="2026-07-28", on_elicit=answers, timeout=30) as c:
            pending = await c.call_tool("whoami", manual=True)
            assert isinstance(pending, PendingCall)
            done = await c.resume(pending, {"sure": SURE}, manual=True)
            pid = int(done.text.split()[1])
            pool = pool_of(proxy)
            assert pool.pids() == [pid]
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 5
            while pid in pool.pids():
                assert time.monotonic() < deadline, "the dead process stayed in the pool"
                await asyncio.sleep(0.02)
            pending = await c.call_tool("whoami", manual=True)
            assert isinstance(pending, PendingCall)
            done = await c.resume(pending, {"sure": SURE}, manual=True)
            assert done.text.startswith("pid ") and int(done.text.split()[1]) != pid

    asyncio.run(go())
    lines = [r.getMessage() for r in caplog.records]
    # a pool process's stderr is logged with the upstream's env values masked
    assert any("stderr: whoami asked, key=***" in line for line in lines)
    assert not any(BRIDGE_KEY in line for line in lines)
    assert any("a bridge process ended" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("processes", [0, 257, True, 2.0, "8"])
def test_a_pool_size_out_of_bounds_is_refused(processes: Any) -> None:
    with pytest.raises(ValueError, match=r"Hold\(processes=\) must be an integer from 1 to 256"):
        Hold(processes=processes)
    with pytest.raises(ValueError, match=r"Replay\(processes=\) must be an integer from 1 to 256"):
        Replay(processes=processes)


def test_rondo_proxy_bridge_processes_flag(capsys: pytest.CaptureFixture[str]) -> None:
    from rondo.cli import main

    for bad in ("0", "257", "x"):
        with pytest.raises(SystemExit, match="2"):
            main(["proxy", "http://127.0.0.1:1/mcp", "--bridge", "replay",
                  "--bridge-processes", bad])
        assert "--bridge-processes" in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["hold", "replay"])
def test_the_flag_reaches_the_served_proxys_pool(mode: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """What `rondo proxy --bridge MODE --bridge-processes 3` hands its workers (RONDO_PROXY)
    builds a bridge whose stdio pool holds 3 processes at most."""
    import json
    import runpy

    from rondo.gateway.proxy import PROXY_ENV

    monkeypatch.setenv(PROXY_ENV, json.dumps({
        "upstream": COMMAND, "bridge": {"mode": mode, "hold_timeout": 300, "max_held": 1000,
                                        "max_rounds": 16, "processes": 3}}))
    served = Path(rondo.__file__).parent / "gateway" / "served.py"
    server = runpy.run_path(str(served))["server"]
    [link] = {ext.link for ext in server.extensions.values() if hasattr(ext, "link")}
    assert link.bridge.mode.processes == 3
    assert link.bridge.sessions.processes == 3


SDK_PYTHON = Path(__file__).resolve().parents[2] / ".cache" / "interop-mcp-venv" / "bin" / "python"
SDK_SERVER = Path(__file__).resolve().parents[1] / "helpers" / "sse_bridge_upstream_mcp.py"


@pytest.mark.parametrize("mode", ["hold", "replay"])
def test_an_sdk_stdio_upstream_serves_bridged_calls_open_at_once(
        mode: str, caplog: pytest.LogCaptureFixture) -> None:
    """A stdio upstream nobody here wrote (the official Python SDK, `mcp` 2.3.0 from its own
    venv, tests/helpers/sse_bridge_upstream_mcp.py over stdio): three `book` calls open at once,
    each answered with its own day and hour, each result with its own answers; the SDK's own
    count of runs (its stderr, logged by the proxy) is one per call in hold, three in replay."""
    if not SDK_PYTHON.exists():
        raise AssertionError(f"{SDK_PYTHON} is missing: `bash scripts/setup.sh` installs the "
                             "pinned official Python SDK (mcp==2.3.0) there")
    caplog.set_level(logging.INFO, logger="rondo.gateway")
    proxy = rondo.proxy([str(SDK_PYTHON), str(SDK_SERVER), "stdio"],
                        upstream_protocol="2025-11-25", bridge=mode, timeout=20, state=KEYS)

    def runs() -> int:
        return sum("stderr: ran book" in r.getMessage() for r in caplog.records)

    async def go() -> None:
        async with proxy.started(), Client(proxy, protocol="2026-07-28", on_elicit=answers,
                                           timeout=30) as c:
            rooms = ["Blue", "Red", "Green"]
            firsts = await asyncio.gather(*(c.call_tool("book", {"room": room}, manual=True)
                                            for room in rooms))
            keys = []
            for first in firsts:
                assert isinstance(first, PendingCall)
                [(key, asked)] = first.input_requests.items()
                assert asked["params"]["message"] == "Which day?"
                keys.append(key)
            seconds = await asyncio.gather(*(
                c.resume(first, {key: day(name)}, manual=True)
                for first, key, name in zip(firsts, keys, DAYS, strict=True)))
            answers_to = []
            for second in seconds:
                assert isinstance(second, PendingCall)
                [(key, asked)] = second.input_requests.items()
                assert asked["params"]["message"] == "What time?"
                answers_to.append(key)
            dones = await asyncio.gather(*(
                c.resume(second, {key: at(hour)}, manual=True)
                for second, key, hour in zip(seconds, answers_to, (9, 10, 11), strict=True)))
            assert [done.text for done in dones] == [
                "Blue booked for Monday at 9:00", "Red booked for Tuesday at 10:00",
                "Green booked for Wednesday at 11:00"]
            want = 3 if mode == "hold" else 9
            deadline = time.monotonic() + 5
            while runs() < want and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            assert runs() == want

    asyncio.run(go())
