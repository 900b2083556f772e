"""rondo.proxy caches the upstream's lists for as long as the upstream's hints say (ttlMs,
cacheScope): counted in requests that reach a real upstream on loopback HTTP, with the proxy's
clock injected."""

from __future__ import annotations

import asyncio

import pytest

import rondo
from rondo.client import Client
from tests.helpers.gateway_upstream import Recorder, served, upstream_server

PAGES = 6  # the upstream's 12 tools in pages of two


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def listings(recorder: Recorder) -> int:
    return sum(1 for post in recorder.posts if post.get("mcp-method") == "tools/list")


def clocked(front: rondo.Server) -> Clock:
    clock = Clock()
    front.extensions["dev.rondo/proxy-lists"].fresh.clock = clock  # type: ignore[attr-defined]
    return clock


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
def test_a_list_within_the_upstreams_ttl_costs_no_upstream_request(protocol: str) -> None:
    recorder = Recorder(upstream_server(list_ttl_ms=60_000).asgi())
    with served(recorder) as (url, _):
        front = rondo.proxy(url)
        clock = clocked(front)

        async def go() -> None:
            async with front.started(), Client(front, protocol=protocol) as client:
                assert listings(recorder) == PAGES  # listed once when the proxy started
                for _ in range(3):
                    assert len(await client.list_tools(refresh=True)) == 12
                assert listings(recorder) == PAGES
                clock.now += 59.9
                await client.list_tools(refresh=True)
                assert listings(recorder) == PAGES  # still within the hint
                clock.now += 0.2
                assert len(await client.list_tools(refresh=True)) == 12
                assert listings(recorder) == 2 * PAGES  # past it: listed again, once
                await client.list_tools(refresh=True)
                assert listings(recorder) == 2 * PAGES
                if protocol == "2026-07-28":
                    clock.now += 10
                    raw = await client.request("tools/list", {})
                    # Never fresher downstream than upstream: 50 s of the 60 s left.
                    assert raw["ttlMs"] == 50_000
                    assert raw["cacheScope"] == "public"

        asyncio.run(go())


def test_concurrent_lists_past_the_ttl_list_the_upstream_once() -> None:
    recorder = Recorder(upstream_server(list_ttl_ms=60_000).asgi())
    with served(recorder) as (url, _):
        front = rondo.proxy(url)
        clock = clocked(front)

        async def go() -> None:
            async with front.started(), Client(front) as client:
                clock.now += 61
                done = await asyncio.gather(*(client.list_tools(refresh=True) for _ in range(5)))
                assert [len(tools) for tools in done] == [12] * 5
                assert listings(recorder) == 2 * PAGES

        asyncio.run(go())


def test_a_zero_ttl_upstream_is_listed_for_every_downstream_list() -> None:
    recorder = Recorder(upstream_server(list_ttl_ms=0).asgi())
    with served(recorder) as (url, _):
        front = rondo.proxy(url)

        async def go() -> None:
            async with front.started(), Client(front) as client:
                assert listings(recorder) == PAGES
                await client.list_tools(refresh=True)
                assert listings(recorder) == 2 * PAGES
                await client.list_tools(refresh=True)
                assert listings(recorder) == 3 * PAGES
                raw = await client.request("tools/list", {})
                assert raw["ttlMs"] == 0  # and the proxy's clients are told it is stale at once

        asyncio.run(go())


def test_a_private_upstream_list_stays_private_downstream() -> None:
    recorder = Recorder(upstream_server(list_cache_scope="private").asgi())
    with served(recorder) as (url, _):
        front = rondo.proxy(url)

        async def go() -> None:
            async with front.started(), Client(front) as client:
                # The proxy's own default is public; the upstream's private wins.
                assert front.list_cache_scope == "public"
                assert (await client.request("tools/list", {}))["cacheScope"] == "private"
                assert (await client.request("prompts/list", {}))["cacheScope"] == "private"

        asyncio.run(go())


def test_a_legacy_upstream_without_hints_is_listed_only_when_it_says_so() -> None:
    recorder = Recorder(upstream_server(list_ttl_ms=0).asgi())
    with served(recorder) as (url, _):
        front = rondo.proxy(url, upstream_protocol="2025-11-25")
        clock = clocked(front)

        async def go() -> None:
            async with front.started(), Client(front) as client:
                before = len(recorder.posts)
                clock.now += 3600
                for _ in range(3):
                    assert len(await client.list_tools(refresh=True)) == 12
                assert len(recorder.posts) == before

        asyncio.run(go())


def test_the_cache_records_the_hints_of_every_page_it_is_given() -> None:
    from rondo.client.cache import ResultCache

    cache = ResultCache(clock=lambda: 0.0)
    cache.put("tools/list", None, {"ttlMs": 5000, "cacheScope": "public"})
    cache.put("tools/list", "c1", {"ttlMs": 0, "cacheScope": "private"})
    cache.put("prompts/list", None, {})
    assert cache.hints == {("tools/list", None): (5000.0, "public"),
                           ("tools/list", "c1"): (0.0, "private"),
                           ("prompts/list", None): (0.0, "private")}
    assert len(cache) == 1  # only the positive ttl is stored
    cache.invalidate("tools/list")
    assert cache.hints == {("prompts/list", None): (0.0, "private")}




@pytest.mark.parametrize("upstream_era", ["2025-11-25", "2026-07-28"])
def test_the_upstreams_list_changed_is_passed_on_even_when_the_entries_look_the_same(
        upstream_era: str) -> None:
    # The upstream's word is relayed: something the proxy does not keep may have changed.
    # (A refresh the proxy makes itself on a lapsed hint stays silent when nothing changed.)
    up = rondo.Server("announcer")

    @up.tool
    def announce() -> str:
        """Tells listeners the tool list changed, without changing it."""
        up.notify_tools_changed()
        return "announced"

    with served(up.asgi()) as (url, _):
        front = rondo.proxy(url, upstream_protocol=upstream_era, timeout=10.0)

        async def go() -> None:
            async with front.started(), Client(front) as client:
                async with client.listen(tools=True) as sub:
                    assert (await client.call_tool("announce")).text == "announced"
                    note = await asyncio.wait_for(sub.__anext__(), 10)
                    assert note["method"] == "notifications/tools/list_changed"
                assert [t.name for t in await client.list_tools()] == ["announce"]

        asyncio.run(go())
