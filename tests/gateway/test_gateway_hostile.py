"""Hostile upstreams behind one gateway beside a good one: garbage, JSON that is not JSON-RPC,
an answer to another id, an HTTP 500 full of internal addresses, a 100 MiB body, an endless
body, silence, a flood of notifications (ending, and endless), input_required forever. Each
ends for the downstream client with the right JSON-RPC error within its stated bound, in
bounded memory, with no upstream address or secret in the error, and the good upstream serves
on after each."""

from __future__ import annotations

import asyncio
import time
import tracemalloc
from typing import Any

import pytest

import rondo
from rondo.client import Client, PendingCall
from rondo.gateway import from_mcp_json
from tests.helpers.gateway_upstream import served, upstream_server
from tests.helpers.hostile_upstream import INTERNAL, Hostile, hostile_server

ERAS = ["2025-11-25", "2026-07-28"]
UNAVAILABLE = "^upstream unavailable$"
SILENT = "^upstream did not answer within 1 s$"
# tool (under `bad`, timeout 1 s, or `big`, the same upstream with timeout 30 s, so a body is
# cut by its size and not by time), the error's message (None: the call completes), and the
# bound in seconds it ends within.
CASES = [
    ("bad_garbage", UNAVAILABLE, 5.0),
    ("bad_not_rpc", UNAVAILABLE, 5.0),
    ("bad_wrong_id", UNAVAILABLE, 5.0),
    ("bad_leaky_500", UNAVAILABLE, 5.0),
    ("big_huge", UNAVAILABLE, 20.0),
    ("big_endless_body", UNAVAILABLE, 20.0),
    ("bad_silent", SILENT, 5.0),
    ("big_flood", None, 20.0),
    ("bad_flood_forever", SILENT, 5.0),
]


@pytest.fixture(scope="module")
def gateway_urls() -> Any:
    with served(Hostile(hostile_server().asgi())) as (bad, hostile), \
            served(upstream_server().asgi()) as (good, _):
        yield bad, good
        hostile.force_exit = True  # its silent answers would hold a graceful stop


def gateway(bad: str, good: str) -> rondo.Server:
    return from_mcp_json({"mcpServers": {
        "bad": {"url": bad, "timeout": 1}, "big": {"url": bad, "timeout": 30},
        "good": {"url": good, "timeout": 5}}})


@pytest.mark.parametrize("protocol", ERAS)
@pytest.mark.parametrize("tool, message, bound", CASES)
def test_a_hostile_answer_is_a_clean_error_and_the_others_serve(
        gateway_urls: Any, tool: str, message: str | None, bound: float, protocol: str) -> None:
    bad, good = gateway_urls
    front = gateway(bad, good)

    async def go() -> None:
        async with front.started(), Client(front, protocol=protocol, timeout=60) as client:
            assert (await client.call_tool("bad_fine")).text == "fine"
            tracemalloc.start()
            began = time.monotonic()
            try:
                if message is None:
                    done = await asyncio.wait_for(client.call_tool(tool), 60)
                    assert done.text == "flooded"
                else:
                    with pytest.raises(rondo.McpError, match=message) as caught:
                        await asyncio.wait_for(client.call_tool(tool), 60)
                    assert caught.value.code == -32603 and caught.value.data is None
                    for leak in ("10.9.8.7", "hostile-secret", "127.0.0.1", "http"):
                        assert leak not in caught.value.message
                elapsed = time.monotonic() - began
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            assert elapsed < bound, f"{tool}: {elapsed:.2f} s, bound {bound} s"
            # A 100 MiB or endless body is cut at the proxy's 16 MiB answer bound.
            assert peak < 48 * 1024 * 1024, f"{tool}: peak {peak / 2**20:.1f} MiB"
            # The gateway stands, and its other upstream (and this one's good tool) serve on.
            assert (await client.call_tool("good_add", {"a": 2, "b": 2})).text == "4"
            assert (await client.call_tool("bad_fine")).text == "fine"

    asyncio.run(go())


def test_an_upstream_asking_forever_is_cut_off_at_the_round_cap(gateway_urls: Any) -> None:
    bad, good = gateway_urls
    front = gateway(bad, good)

    async def go() -> None:
        async with front.started(), Client(front, on_elicit=lambda request: None) as client:
            pending: Any = await client.call_tool("bad_endless", manual=True)
            rounds = 1
            began = time.monotonic()
            with pytest.raises(rondo.McpError, match="^upstream asked for more than 16 input "
                               "rounds$") as caught:
                while True:
                    assert isinstance(pending, PendingCall) and list(pending.input_requests) == [
                        "again"]
                    pending = await client.resume(
                        pending, {"again": {"action": "accept", "content": {"ok": True}}},
                        manual=True)
                    rounds += 1
            assert caught.value.code == -32603
            assert rounds == 15  # the 16th upstream round is refused, not relayed
            assert time.monotonic() - began < 10
            assert (await client.call_tool("good_add", {"a": 1, "b": 1})).text == "2"

    asyncio.run(go())


def test_the_hostile_500_is_logged_for_the_operator_but_clipped(
        gateway_urls: Any, caplog: pytest.LogCaptureFixture) -> None:
    bad, good = gateway_urls
    front = gateway(bad, good)

    async def go() -> None:
        async with front.started(), Client(front) as client:
            with pytest.raises(rondo.McpError, match=UNAVAILABLE):
                await client.call_tool("bad_leaky_500")

    with caplog.at_level("WARNING", logger="rondo.gateway"):
        asyncio.run(go())
    logged = [r.getMessage() for r in caplog.records if "HttpError" in r.getMessage()]
    assert logged and INTERNAL in logged[0]  # the operator sees why; the client never does
