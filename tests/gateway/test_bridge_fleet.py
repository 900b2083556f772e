"""Hold in a fleet: three real `rondo proxy --http --bridge hold --redis URL` processes sharing
state keys and one real redis-server, in front of a 2025-11-25 rondo upstream whose `book`
asks twice (gateway/bridge/forward.py). A retry at a process without the hold is forwarded to
the holder over Redis; a holder that is gone, or does not answer, is a clean -32602 in bound."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import rondo
from rondo.client import Client, PendingCall
from tests.helpers import redis_server
from tests.helpers.bridge_upstream import RUNS, answers, bridge_upstream
from tests.helpers.gateway_upstream import free_port, served
from tests.helpers.processes import end

pytestmark = pytest.mark.slow

TIMEOUT = 3.0  # the proxies' --timeout: a forwarded retry waits this + MARGIN (2 s) at most
MONDAY = {"day": {"action": "accept", "content": {"day": "Monday"}}}
TEN = {"time": {"action": "accept", "content": {"time": "10:00"}}}


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with served(bridge_upstream().asgi()) as (url, _):
        yield url


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server.running() as url:
        yield url


def keyed_env() -> dict[str, str]:
    """This environment with one fresh state key (every process started with it shares the
    key) and without RONDO_REDIS_URL (each process is given --redis)."""
    from rondo.state.keys import new_secret_text

    env = {**os.environ, "RONDO_STATE_KEYS": f"k1:{new_secret_text()}"}
    env.pop("RONDO_REDIS_URL", None)
    return env


def launch(env: dict[str, str], redis_url: str, *args: str,
           ) -> tuple[subprocess.Popen[bytes], str]:
    """`rondo ARGS --http PORT --upstream-protocol 2025-11-25 --bridge hold --redis URL`
    started, not yet awaited: the process (stderr piped) and its MCP URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "rondo", *args, "--http", str(port),
         "--upstream-protocol", "2025-11-25", "--bridge", "hold", "--redis", redis_url],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    return proc, f"http://127.0.0.1:{port}/mcp"


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGINT (SIGCONT first, for a frozen one), killed if still running after 15 s, reaped."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGCONT)
    end(proc, 15, signal.SIGINT)


@contextmanager
def serving(redis_url: str, command: str, *args: str) -> Iterator[str]:
    """`rondo COMMAND ARGS` (proxy or gateway, its workers behind one address) `launch`ed with
    a `keyed_env()`: its URL once it says it serves and answers /healthz; stopped after."""
    from tests.gateway.test_gateway_cli import wait_for_line
    from tests.helpers.fleet_parts import wait_http

    proc, url = launch(keyed_env(), redis_url, command, *args)
    try:
        wait_for_line(proc, b"serving rondo-%s at" % command.encode())
        wait_http(url.removesuffix("/mcp") + "/healthz", timeout=20)
        yield url
    finally:
        stop(proc)


class Fleet:
    def __init__(self, upstream: str, redis_url: str, count: int = 3) -> None:
        from tests.gateway.test_gateway_cli import wait_for_line

        env = keyed_env()
        started = [launch(env, redis_url, "proxy", upstream, "--timeout", str(TIMEOUT))
                   for _ in range(count)]
        self.procs = [proc for proc, _ in started]
        self.urls = [url for _, url in started]
        for proc in self.procs:
            wait_for_line(proc, b"serving rondo-proxy at")

    def stop(self) -> None:
        for proc in self.procs:
            stop(proc)


@pytest.fixture
def fleet(upstream: str, redis_url: str) -> Iterator[Fleet]:
    made = Fleet(upstream, redis_url)
    try:
        yield made
    finally:
        made.stop()


def client(url: str) -> Client:
    return Client(url, protocol="2026-07-28", on_elicit=answers, timeout=20)


async def _call(url: str) -> PendingCall:
    async with client(url) as c:
        pending = await c.call_tool("book", {"room": "Blue"}, manual=True)
        assert isinstance(pending, PendingCall)
        assert list(pending.input_requests) == ["day"]
        return pending


async def _resume(url: str, pending: PendingCall, responses: dict[str, Any]) -> Any:
    async with client(url) as c:
        return await c.resume(pending, responses, manual=True)


def test_each_round_at_another_process_completes_the_one_held_call(fleet: Fleet) -> None:
    """Round 1 at A, its retry at B (forwarded to A, which asks the second question), the
    last retry at C (forwarded to A again): the flow completes and `book` ran once upstream,
    so the held call was resumed, not made again."""
    async def go() -> None:
        before = RUNS["book"]
        pending = await _call(fleet.urls[0])
        second = await _resume(fleet.urls[1], pending, MONDAY)
        assert isinstance(second, PendingCall)
        assert list(second.input_requests) == ["time"]
        done = await _resume(fleet.urls[2], second, TEN)
        assert done.text == "Blue booked for Monday at 10:00"
        assert RUNS["book"] - before == 1

    asyncio.run(go())


def test_a_killed_holder_is_minus_32602_at_once_at_the_survivor(fleet: Fleet) -> None:
    """The holder (A) is killed (SIGKILL) after the first round: Redis drops its subscription,
    so the retry at B finds nobody on A's channel and is -32602 at once, not after a wait."""
    async def go() -> None:
        pending = await _call(fleet.urls[0])
        fleet.procs[0].kill()
        fleet.procs[0].wait(10)
        started = time.monotonic()
        with pytest.raises(rondo.McpError, match="holding the upstream call it names is gone") \
                as caught:
            await _resume(fleet.urls[1], pending, MONDAY)
        assert caught.value.code == -32602
        assert time.monotonic() - started < TIMEOUT  # well under the forwarding bound
        # The survivors still serve new flows end to end, across processes.
        again = await _call(fleet.urls[1])
        assert (await _resume(fleet.urls[2], again, {**MONDAY, **TEN})).text == (
            "Blue booked for Monday at 10:00")

    asyncio.run(go())


def test_a_holder_that_does_not_answer_is_minus_32602_within_the_bound(fleet: Fleet) -> None:
    """The holder is frozen (SIGSTOP): still subscribed, never answering. The retry at B ends
    with -32602 after the bound (upstream timeout + 2 s), not a hang."""
    async def go() -> None:
        pending = await _call(fleet.urls[0])
        fleet.procs[0].send_signal(signal.SIGSTOP)
        try:
            started = time.monotonic()
            with pytest.raises(rondo.McpError, match=r"did not answer within 5 s") as caught:
                await _resume(fleet.urls[1], pending, MONDAY)
            elapsed = time.monotonic() - started
        finally:
            fleet.procs[0].send_signal(signal.SIGCONT)
        assert caught.value.code == -32602
        assert TIMEOUT + 2 - 0.5 < elapsed < TIMEOUT + 2 + 4

    asyncio.run(go())


def test_hold_with_workers_and_a_redis_is_not_refused(capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """With --redis the start-up refusal of --bridge hold --workers N is lifted (an
    unreachable Redis then fails the start, as for any `rondo run --redis`)."""
    from rondo.cli import main
    from rondo.fleet.guard import ENV_FLEET
    from rondo.fleet.run import ENV_RUN
    from rondo.gateway.proxy import PROXY_ENV

    # `rondo run` marks its process a fleet member: put this test process's environment back.
    for name in (ENV_FLEET, ENV_RUN, PROXY_ENV):
        monkeypatch.setenv(name, "")

    assert main(["proxy", "http://127.0.0.1:1/mcp", "--bridge", "hold", "--http", "8000",
                 "--workers", "2", "--redis", "redis://127.0.0.1:1/0"]) == 2
    err = capsys.readouterr().err
    assert "--bridge hold keeps each held call" not in err
    assert "--redis" in err


def test_workers_sharing_one_address_with_a_redis_complete_every_flow(
        upstream: str, redis_url: str) -> None:
    """`rondo proxy --bridge hold --workers 2 --redis URL`: one address, two worker processes,
    each round on a new connection (so the kernel picks the worker). Every flow completes and
    `book` ran once per flow: retries that reached the other worker were forwarded."""
    with serving(redis_url, "proxy", upstream, "--workers", "2", "--timeout", str(TIMEOUT)) as url:

        async def go() -> None:
            before = RUNS["book"]
            for _ in range(6):
                pending = await _call(url)
                second = await _resume(url, pending, MONDAY)
                assert isinstance(second, PendingCall)
                done = await _resume(url, second, TEN)
                assert done.text == "Blue booked for Monday at 10:00"
            assert RUNS["book"] - before == 6

        asyncio.run(go())


def test_gateway_hold_with_two_workers_and_a_redis_forwards_to_the_holder(
        upstream: str, redis_url: str, tmp_path: Any) -> None:
    """`rondo gateway mcp.json --bridge hold --workers 2 --redis URL` (refused at start before:
    the Redis hook reached the gateway, not its mounted proxies' bridges). Four flows run at
    once, each round on a new connection; every flow completes with `book` run once per flow,
    and the test, subscribed to the bridge channels itself, sees retries forwarded between
    the workers (so rounds did reach the worker without the hold, and were served by the
    holder)."""
    import json

    import redis

    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"old": {"url": upstream}}}))
    watcher = redis.Redis.from_url(redis_url).pubsub()
    watcher.psubscribe("rondo:bridge:*")
    try:
        with serving(redis_url, "gateway", str(config), "--workers", "2") as url:

            async def flow() -> str:
                async with client(url) as c:
                    pending = await c.call_tool("old_book", {"room": "Blue"}, manual=True)
                assert isinstance(pending, PendingCall)
                assert list(pending.input_requests) == ["day"]
                second = await _resume(url, pending, MONDAY)
                assert isinstance(second, PendingCall)
                return str((await _resume(url, second, TEN)).text)

            async def go() -> None:
                before = RUNS["book"]
                for _ in range(3):
                    done = await asyncio.gather(*(flow() for _ in range(4)))
                    assert done == ["Blue booked for Monday at 10:00"] * 4
                assert RUNS["book"] - before == 12

            asyncio.run(go())
            forwarded = 0
            while (message := watcher.get_message(timeout=0.2)) is not None:
                if message["type"] == "pmessage" and json.loads(message["data"]).get("t") == "q":
                    forwarded += 1
            assert forwarded > 0
    finally:
        watcher.close()


def test_a_forwarded_round_carries_the_upstreams_progress_and_log_messages(
        fleet: Fleet) -> None:
    """Round 1 at A (the holder), the retry at B: what the upstream reports and logs while B's
    round runs at A reaches B's client, as it would had the retry landed on A."""
    from tests.helpers.wire_schema import validate

    heard: list[Any] = []
    progress: list[tuple[Any, Any, Any]] = []

    def note(message: Any) -> None:
        if message.get("method") in ("notifications/message", "notifications/progress"):
            validate({"jsonrpc": "2.0", **message}, era="2026-07-28")
        if message.get("method") == "notifications/message":
            heard.append(message["params"]["data"])

    async def go() -> None:
        async with Client(fleet.urls[0], protocol="2026-07-28", on_elicit=answers, timeout=20,
                          log_level="info") as first:
            pending = await first.call_tool("steps", manual=True)
            assert isinstance(pending, PendingCall) and list(pending.input_requests) == ["sure"]
        async with Client(fleet.urls[1], protocol="2026-07-28", on_elicit=answers, timeout=20,
                          log_level="info", on_notification=note) as second:
            done = await second.resume(
                pending, {"sure": {"action": "accept", "content": {"ok": True}}},
                on_progress=lambda *args: progress.append(args))
            assert done.text == "stepped"

    asyncio.run(go())
    assert heard == ["answered True"]  # debug is below the client's level
    assert progress == [(2, 3, "answered")]
