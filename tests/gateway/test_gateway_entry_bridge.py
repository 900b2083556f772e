"""`"bridge"` per mcp.json entry: each upstream of one gateway bridged its own way ("hold",
"replay", or "none" over the gateway's `bridge=`), validated when the file is read with the
server and the field named (docs/gateway.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import rondo
from rondo.client import Client, ConfigError, PendingCall, load_mcp_json
from rondo.gateway import from_mcp_json
from rondo.gateway.bridge import Hold, Replay
from tests.helpers.bridge_upstream import RUNS, answers, bridge_upstream
from tests.helpers.gateway_upstream import served

KEYS = rondo.StatePolicy(keys=[("k1", b"k" * 32)])
MONDAY = {"action": "accept", "content": {"day": "Monday"}}
TEN = {"action": "accept", "content": {"time": "10:00"}}


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with served(bridge_upstream().asgi()) as (url, _):
        yield url


def test_each_entry_is_bridged_its_own_way(upstream: str) -> None:
    """One upstream behind three entries: "hold" runs `book` once for its two rounds, "replay"
    three times, "none" refuses the question although the gateway's default is hold; an entry
    without the key takes the gateway's `bridge=` (hold, with its tuning)."""
    front = from_mcp_json({"mcpServers": {
        "held": {"url": upstream, "bridge": "hold"},
        "replayed": {"url": upstream, "bridge": "replay"},
        "plain": {"url": upstream, "bridge": "none"},
        "default": {"url": upstream}}},
        upstream_protocol="2025-11-25", bridge=Hold(timeout=60), state=KEYS)

    async def book(c: Client, tool: str) -> int:
        before = RUNS["book"]
        first = await c.call_tool(tool, {"room": "Blue"}, manual=True)
        assert isinstance(first, PendingCall)
        assert list(first.input_requests) == ["day"]
        second = await c.resume(first, {"day": MONDAY}, manual=True)
        assert isinstance(second, PendingCall)
        done = await c.resume(second, {"time": TEN}, manual=True)
        assert done.text == "Blue booked for Monday at 10:00"
        return RUNS["book"] - before

    async def go() -> None:
        async with front.started(), Client(front, protocol="2026-07-28", on_elicit=answers,
                                           timeout=20) as c:
            assert await book(c, "held_book") == 1
            assert await book(c, "replayed_book") == 3
            assert await book(c, "default_book") == 1
            got = await c.call_tool("plain_book", {"room": "Blue"}, manual=True)
            assert not isinstance(got, PendingCall)
            assert got.is_error

    asyncio.run(go())


def test_an_entrys_mode_takes_the_gateways_tuning_only_for_the_same_mode() -> None:
    from rondo.gateway.config import entry_bridge

    [held, replayed, none, plain] = load_mcp_json({"mcpServers": {
        "a": {"url": "http://x/mcp", "bridge": "hold"},
        "b": {"url": "http://x/mcp", "bridge": "replay"},
        "c": {"url": "http://x/mcp", "bridge": "none"},
        "d": {"url": "http://x/mcp"}}}).values()
    tuned = Hold(timeout=7)
    assert entry_bridge(held, tuned) is tuned
    assert isinstance(entry_bridge(replayed, tuned), Replay)
    assert entry_bridge(none, tuned) is None
    assert entry_bridge(plain, tuned) is tuned
    assert entry_bridge(plain, None) is None
    assert isinstance(entry_bridge(held, None), Hold)


@pytest.mark.parametrize("value", ["sometimes", "HOLD", True, 1, ["hold"]])
def test_a_bad_bridge_key_is_refused_naming_the_server_and_field(value: Any) -> None:
    with pytest.raises(ConfigError, match=r"^server 'weather': bridge must be one of hold, "
                                          r"replay, none$"):
        from_mcp_json({"mcpServers": {"weather": {"url": "http://127.0.0.1:9/mcp",
                                                  "bridge": value}}})


def test_rondo_gateway_refuses_an_entrys_hold_across_workers_without_a_bus(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from rondo.cli import main

    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {"a": {"url": "http://127.0.0.1:9/mcp"}, '
                    '"b": {"url": "http://127.0.0.1:9/mcp", "bridge": "hold"}}}')
    assert main(["gateway", str(path), "--workers", "2"]) == 2
    assert "server 'b''s \"bridge\": \"hold\" keeps each held call" in capsys.readouterr().err
    path.write_text('{"mcpServers": {"a": {"url": "http://127.0.0.1:9/mcp", '
                    '"bridge": "sometimes"}}}')
    assert main(["gateway", str(path)]) == 2
    assert "server 'a': bridge must be one of hold, replay, none" in capsys.readouterr().err


def test_an_entry_without_the_key_takes_the_gateways_mode_by_name() -> None:
    from rondo.gateway.config import entry_bridge

    [plain] = load_mcp_json({"mcpServers": {"d": {"url": "http://x/mcp"}}}).values()
    assert isinstance(entry_bridge(plain, "hold"), Hold)
    assert isinstance(entry_bridge(plain, "replay"), Replay)
