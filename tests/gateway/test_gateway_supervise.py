"""A supervised stdio upstream: a process that dies is started again with backoff (bounded);
calls meanwhile get -32603 "upstream unavailable" at once; its stderr is logged with its env
values masked."""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from pathlib import Path

import pytest

import rondo
from rondo.client import Client
from rondo.gateway import Restart

MORTAL = Path(__file__).resolve().parents[1] / "helpers" / "mortal_upstream.py"
KEY = "mortal-key-9f3b"


async def restarted_pid(client: Client, tool: str) -> int:
    """The upstream's pid (`tool`'s answer) once it is started again, within 20 s; every call
    meanwhile fails with -32603 "upstream unavailable"."""
    deadline = time.monotonic() + 20
    while True:
        try:
            return int((await client.call_tool(tool)).text)
        except rondo.McpError as exc:
            assert exc.code == -32603 and "unavailable" in exc.message
            assert time.monotonic() < deadline, "the upstream was not started again"
            await asyncio.sleep(0.05)


def test_a_dead_stdio_upstream_is_started_again(caplog: pytest.LogCaptureFixture,
                                                tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    front = rondo.proxy([sys.executable, str(MORTAL)], timeout=20.0,
                        env={"MORTAL_KEY": KEY, "MORTAL_LOG": str(starts)},
                        restart=Restart(first=0.5, most=1.0, attempts=3))

    async def go() -> None:
        async with front.started(), Client(front) as client:
            first = int((await client.call_tool("pid")).text)
            # In flight when the process exits: a clean -32603, no URL or command in it.
            began = time.monotonic()
            with pytest.raises(rondo.McpError, match="^upstream unavailable$") as caught:
                await asyncio.wait_for(client.call_tool("die"), 10)
            assert caught.value.code == -32603 and time.monotonic() - began < 5
            # During the backoff (0.5 s) calls are answered at once, never held.
            began = time.monotonic()
            with pytest.raises(rondo.McpError, match="^upstream unavailable"):
                await asyncio.wait_for(client.call_tool("pid"), 10)
            assert time.monotonic() - began < 0.5
            second = await restarted_pid(client, "pid")
            assert second != first
            assert sorted(t.name for t in await client.list_tools()) == ["babble", "die", "pid"]

    with caplog.at_level(logging.INFO, logger="rondo.gateway"):
        asyncio.run(go())
    assert len(starts.read_text().split()) == 2
    lines = [r.getMessage() for r in caplog.records]
    assert sum("stderr: mortal starting, key=***" in line for line in lines) == 2
    assert not any(KEY in line for line in lines)
    assert any("its process ended; starting it again" in line for line in lines)
    assert any("started again" in line for line in lines)


def test_restarts_are_bounded(caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    front = rondo.proxy([sys.executable, str(MORTAL)], timeout=5.0, must_connect=False,
                        env={"MORTAL_LOG": str(starts), "MORTAL_EXIT_AT_ONCE": "1"},
                        restart=Restart(first=0.05, most=0.1, attempts=3, steady=60))

    async def go() -> None:
        async with front.started():
            deadline = time.monotonic() + 30
            while not any("not started again after 3 failed starts" in r.getMessage()
                          for r in caplog.records):
                assert time.monotonic() < deadline, "the restarts never stopped"
                await asyncio.sleep(0.05)

    with caplog.at_level(logging.INFO, logger="rondo.gateway"):
        asyncio.run(go())
    assert len(starts.read_text().split()) == 3  # three failed starts in a row, the first counted


def test_a_process_that_cannot_start_fails_the_start_when_it_must_connect() -> None:
    front = rondo.proxy([sys.executable, str(MORTAL)], timeout=5.0,
                        env={"MORTAL_EXIT_AT_ONCE": "1"})

    async def go() -> None:
        async with front.started():
            raise AssertionError("started without its upstream")

    with pytest.raises(RuntimeError, match="cannot reach its upstream"):
        asyncio.run(go())


@pytest.mark.parametrize("options, message", [
    ({"first": 0}, "0 < first <= most"), ({"first": 5, "most": 1}, "0 < first <= most"),
    ({"attempts": -1}, "a count"), ({"steady": -1}, "steady >= 0"),
])
def test_bad_restart_policies(options: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Restart(**options)  # type: ignore[arg-type]


def test_backoff_doubles_up_to_its_most() -> None:
    policy = Restart(first=0.5, most=4.0)
    assert [policy.delay(n) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]


def test_in_a_gateway_a_dying_stdio_upstream_costs_the_others_nothing(tmp_path: Path) -> None:
    from rondo.gateway import from_mcp_json
    from tests.helpers.gateway_upstream import served, upstream_server

    with served(upstream_server().asgi()) as (url, _):
        front = from_mcp_json({"mcpServers": {
            "mortal": {"command": sys.executable, "args": [str(MORTAL)], "timeout": 20},
            "steady": {"url": url}}}, restart=Restart(first=0.5, most=1.0, attempts=3))

        async def go() -> None:
            async with front.started(), Client(front) as client:
                first = int((await client.call_tool("mortal_pid")).text)
                with pytest.raises(rondo.McpError, match="^upstream unavailable$"):
                    await asyncio.wait_for(client.call_tool("mortal_die"), 10)
                # While it restarts, the other upstream answers as before.
                assert (await client.call_tool("steady_add", {"a": 1, "b": 2})).text == "3"
                second = await restarted_pid(client, "mortal_pid")
                assert second != first

        asyncio.run(go())


def test_a_stdio_upstream_writing_garbage_is_cut_off_and_started_again() -> None:
    front = rondo.proxy([sys.executable, str(MORTAL)], timeout=20.0,
                        restart=Restart(first=0.2, most=0.5, attempts=3))

    async def go() -> None:
        async with front.started(), Client(front) as client:
            first = int((await client.call_tool("pid")).text)
            began = time.monotonic()
            with pytest.raises(rondo.McpError, match="^upstream unavailable$"):
                await asyncio.wait_for(client.call_tool("babble"), 10)
            assert time.monotonic() - began < 5  # not the tool's 30 s, nor the 20 s timeout
            second = await restarted_pid(client, "pid")
            assert second != first  # the untrusted process was replaced

    asyncio.run(go())


def test_a_stderr_line_cut_inside_a_key_logs_none_of_it(caplog: pytest.LogCaptureFixture) -> None:
    """The stdio transport passes at most 4,096 characters of a stderr line: one cut inside an
    env value logs neither the value nor its first characters."""
    front = rondo.proxy([sys.executable, str(MORTAL)], env={"MORTAL_KEY": KEY})
    [link] = {ext.link for ext in front.extensions.values() if hasattr(ext, "link")}
    with caplog.at_level(logging.INFO, logger="rondo.gateway"):
        link.stderr_line("x" * 4090 + KEY[:6])  # as the transport cuts key=... at 4,096
        link.stderr_line(f"key={KEY}, again {KEY}")
        link.stderr_line("ends in mor")  # fewer than 4 characters of it: kept
    lines = [r.getMessage() for r in caplog.records]
    assert lines[-3].endswith("x***") and KEY[:4] not in lines[-3]
    assert lines[-2].endswith("stderr: key=***, again ***")
    assert lines[-1].endswith("stderr: ends in mor")
