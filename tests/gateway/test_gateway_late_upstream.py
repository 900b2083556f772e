"""A gateway whose upstreams are all down when it starts: it still advertises tools, prompts
and resources (every proxied upstream can bring them), so a 2025-11-25 client that initialized
then lists them and hears `list_changed` once an upstream comes up (docs/gateway.md)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from rondo.client import Client
from rondo.gateway import from_mcp_json
from rondo.gateway.supervise import Restart
from tests.helpers.gateway_upstream import free_port, served, upstream_server

FAST = Restart(first=0.1, most=0.2, attempts=1000, steady=60)


@pytest.mark.parametrize("transport", ["memory", "http"])
def test_a_legacy_client_of_a_gateway_started_with_every_upstream_down_learns_of_them(
        transport: str) -> None:
    port = free_port()
    front = from_mcp_json({"mcpServers": {"late": {"url": f"http://127.0.0.1:{port}/mcp",
                                                   "timeout": 2}}}, restart=FAST)
    heard: list[str] = []

    def note(message: dict[str, Any]) -> None:
        heard.append(str(message.get("method")))

    async def go(target: Any) -> None:
        async with Client(target, protocol="2025-11-25", on_notification=note) as c:
            offers = c.server_capabilities or {}
            assert offers.get("tools") == {"listChanged": True}
            assert (offers.get("prompts") or {}).get("listChanged") is True
            assert (offers.get("resources") or {}).get("listChanged") is True
            assert await c.list_tools() == []  # advertised, empty until the upstream comes
            with served(upstream_server().asgi(), port=port):
                deadline = time.monotonic() + 15
                while "notifications/tools/list_changed" not in heard:
                    assert time.monotonic() < deadline, f"no tools/list_changed: {heard}"
                    await asyncio.sleep(0.05)
                names = {tool.name for tool in await c.list_tools(refresh=True)}
                assert "late_add" in names
                assert (await c.call_tool("late_add", {"a": 2, "b": 3})).text == "5"

    async def in_memory() -> None:
        async with front.started():
            await go(front)

    if transport == "memory":
        asyncio.run(in_memory())
    else:
        with served(front.asgi()) as (url, _):
            asyncio.run(go(url))


def test_advertise_names_lists_only() -> None:
    import rondo

    server = rondo.Server("s")
    assert "tools" not in server.capabilities()
    server.advertise("tools")
    assert server.capabilities()["tools"] == {"listChanged": True}
    assert server.serves("tools") and not server.serves("prompts")
    with pytest.raises(ValueError, match="got 'logging'"):
        server.advertise("logging")


def test_a_lone_proxy_that_need_not_connect_advertises_its_lists_too() -> None:
    """`rondo.proxy(url, must_connect=False)` with the upstream down: a 2025-11-25 client that
    initialized then sees the lists and hears tools/list_changed when the upstream comes."""
    import rondo

    port = free_port()
    front = rondo.proxy(f"http://127.0.0.1:{port}/mcp", timeout=2, must_connect=False,
                        restart=FAST)
    heard: list[str] = []

    async def go() -> None:
        async with front.started(), Client(front, protocol="2025-11-25",
                                           on_notification=lambda m: heard.append(
                                               str(m.get("method")))) as c:
            assert (c.server_capabilities or {}).get("tools") == {"listChanged": True}
            with served(upstream_server().asgi(), port=port):
                deadline = time.monotonic() + 15
                while "notifications/tools/list_changed" not in heard:
                    assert time.monotonic() < deadline, f"no tools/list_changed: {heard}"
                    await asyncio.sleep(0.05)
                assert (await c.call_tool("add", {"a": 2, "b": 3})).text == "5"

    asyncio.run(go())
