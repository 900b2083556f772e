"""An upstream's own JSON-RPC error passed on by the proxy keeps its code and its message
clipped to 1,024 characters (docs/gateway.md, hostile upstreams), on every relayed path: a call,
a call through the legacy bridge, a completion (gateway/upstream_errors.py). Before, the bridge
and completion passed an upstream's message on whole, however long."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import rondo
from rondo.client import Client
from rondo.gateway.bridge import Hold, Replay
from rondo.gateway.upstream_errors import MAX_TEXT, clip
from tests.helpers.gateway_upstream import served

LOUD = "internal detail " * 2000  # 32,000 characters


def loud_upstream() -> rondo.Server:
    up = rondo.Server("loud")

    @up.completion
    def complete(ref: dict[str, Any], argument: dict[str, Any],
                 context: dict[str, str]) -> dict[str, Any]:
        raise rondo.McpError(-32602, LOUD)

    @up.prompt
    def greet(name: str) -> str:
        """A prompt to complete an argument of."""
        return f"Hello {name}"

    @up.tool
    def loud() -> str:
        """Fails with a very long JSON-RPC error."""
        raise rondo.McpError(-32099, LOUD)

    return up


def test_clip_keeps_short_text_and_cuts_long_text() -> None:
    assert clip("short") == "short"
    assert clip("x" * MAX_TEXT) == "x" * MAX_TEXT
    assert clip("x" * (MAX_TEXT + 1)) == "x" * MAX_TEXT + "..."


@pytest.mark.parametrize("bridge", [None, "hold", "replay"])
def test_an_upstreams_long_error_reaches_the_client_clipped(bridge: str | None) -> None:
    with served(loud_upstream().asgi()) as (url, _):
        mode = {"hold": Hold(), "replay": Replay(), None: None}[bridge]
        front = rondo.proxy(url, upstream_protocol="2025-11-25", bridge=mode, timeout=10,
                            state=rondo.StatePolicy(keys=[("k1", b"k" * 32)]))

        async def go() -> None:
            async with front.started(), Client(front, protocol="2026-07-28") as client:
                with pytest.raises(rondo.McpError, match="^internal detail") as caught:
                    await client.call_tool("loud", manual=True)
                assert caught.value.code == -32099
                assert caught.value.message == LOUD[:MAX_TEXT] + "..."
                if bridge is None:
                    with pytest.raises(rondo.McpError, match="^internal detail") as caught:
                        await client.complete({"type": "ref/prompt", "name": "greet"}, "name",
                                              "A")
                    assert caught.value.code == -32602
                    assert caught.value.message == LOUD[:MAX_TEXT] + "..."

        asyncio.run(go())
