"""The legacy bridge over a 2024-11-05 HTTP+SSE upstream: a server nobody here wrote (the
official Python SDK, `mcp` 2.3.0 from its own pinned venv, tests/helpers/sse_bridge_upstream_mcp.py)
whose tools elicit and sample mid-call, sending each question on its session's one SSE stream.
Behind `rondo.proxy(url, transport="sse", bridge=...)` a 2026-07-28 client gets input rounds
and completes them, in both modes; the upstream's own count of tool runs tells hold (one run)
from replay (one per round)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import rondo
from rondo.client import Client, PendingCall
from tests.helpers.bridge_upstream import answers
from tests.helpers.sdk_sse import SdkServer, sdk_sse_server
from tests.helpers.wire_schema import assert_definition

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "tests" / "helpers" / "sse_bridge_upstream_mcp.py"
KEYS = rondo.StatePolicy(keys=[("k1", b"k" * 32)])
MONDAY = {"action": "accept", "content": {"day": "Monday"}}
TEN = {"action": "accept", "content": {"time": "10:00"}}


class Upstream:
    def __init__(self, server: SdkServer) -> None:
        self.url = server.url
        self.lines = server.lines  # the SDK server's run log, read as it comes

    def runs(self, tool: str) -> int:
        return self.lines.count(f"ran {tool}")


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with sdk_sse_server(SERVER) as server:
        yield Upstream(server)


def sample(request: Any) -> Any:
    return {"role": "assistant", "content": {"type": "text", "text": "short"}, "model": "m"}


def front(url: str, mode: str) -> rondo.Server:
    return rondo.proxy(url, transport="sse", upstream_protocol="2025-11-25", bridge=mode,
                       timeout=10, state=KEYS)


async def _settled(upstream: Upstream, tool: str, want: int) -> int:
    """The upstream's count of `tool` runs once it reaches `want` (its stdout is read by a
    thread), or what it is at the deadline."""
    deadline = time.monotonic() + 5
    while upstream.runs(tool) < want and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return upstream.runs(tool)


@pytest.mark.parametrize("mode", ["hold", "replay"])
def test_an_sse_upstreams_mid_call_questions_are_input_rounds(upstream: Upstream,
                                                              mode: str) -> None:
    """Round by round with a manual 2026-07-28 client: `book`'s two elicitations are two
    rounds (each one question, its schema passed on), then the result; the upstream ran `book`
    once in hold and three times in replay (re-made each round, earlier answers replayed).
    `summarize`'s sampling request completes with a handler-driven client."""
    proxy = front(upstream.url, mode)

    async def go() -> None:
        async with proxy.started(), Client(proxy, protocol="2026-07-28", on_elicit=answers,
                                           on_sample=sample, timeout=20) as c:
            before = upstream.runs("book")
            first = await c.call_tool("book", {"room": "Blue"}, manual=True)
            assert isinstance(first, PendingCall)
            [(key, asked)] = first.input_requests.items()
            assert asked["method"] == "elicitation/create"
            assert asked["params"]["message"] == "Which day?"
            assert "day" in asked["params"]["requestedSchema"]["properties"]
            # as the official schema has it: the SDK's extra `title` is not passed on
            assert set(asked["params"]["requestedSchema"]) <= {
                "$schema", "type", "properties", "required"}
            assert_definition("InputRequests", first.input_requests)
            second = await c.resume(first, {key: MONDAY}, manual=True)
            assert isinstance(second, PendingCall)
            [(key2, asked2)] = second.input_requests.items()
            assert_definition("InputRequests", second.input_requests)
            assert asked2["params"]["message"] == "What time?"
            done = await c.resume(second, {key2: TEN}, manual=True)
            assert done.text == "Blue booked for Monday at 10:00"
            want = 1 if mode == "hold" else 3
            assert await _settled(upstream, "book", before + want) - before == want
            assert (await c.call_tool("summarize", {"text": "x"})).text == "summary: short"

    asyncio.run(go())


def test_an_sse_upstreams_question_is_refused_without_a_bridge(upstream: Upstream) -> None:
    """The same proxy without `bridge=`: the upstream's elicitation is answered with an error,
    which the SDK's tool ends the call with (what the bridge changes)."""
    proxy = rondo.proxy(upstream.url, transport="sse", upstream_protocol="2025-11-25",
                        timeout=10, state=KEYS)

    async def go() -> None:
        async with proxy.started(), Client(proxy, protocol="2026-07-28", on_elicit=answers,
                                           timeout=20) as c:
            with pytest.raises(rondo.McpError, match="only with a bridge"):
                await c.call_tool("book", {"room": "Blue"}, manual=True)

    asyncio.run(go())
