"""rondo.proxy relays the upstream's `notifications/resources/updated` to its subscribers: a
downstream subscription subscribes upstream, on every pair of upstream and downstream eras,
with a real upstream on loopback HTTP."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import rondo
from rondo.client import Client
from tests.helpers.gateway_upstream import Recorder, served

ERAS = ["2025-11-25", "2026-07-28"]


def notes_upstream() -> rondo.Server:
    up = rondo.Server("notes")

    @up.resource("note://a")
    def a() -> str:
        return "a"

    @up.resource("note://b")
    def b() -> str:
        return "b"

    @up.tool()
    def touch(uri: str) -> str:
        up.notify_resource_updated(uri)
        return "touched"

    return up


@pytest.mark.parametrize("downstream", ERAS)
@pytest.mark.parametrize("upstream_era", ERAS)
def test_an_upstream_update_reaches_the_proxys_subscriber(upstream_era: str,
                                                          downstream: str) -> None:
    recorder = Recorder(notes_upstream().asgi())
    with served(recorder) as (url, _):
        front = rondo.proxy(url, upstream_protocol=upstream_era, timeout=10.0)
        heard: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        async def go() -> None:
            async with front.started():
                if downstream == "2025-11-25":
                    async with Client(front, protocol=downstream,
                                      on_notification=heard.put_nowait) as client:
                        assert await client.request("resources/subscribe",
                                                    {"uri": "note://a"}) == {}
                        await updates(client, heard)
                else:
                    async with Client(front, protocol=downstream) as client, client.listen(
                            resource_uris=["note://a"]) as sub:
                        async def pump() -> None:
                            async for note in sub:
                                heard.put_nowait(note)
                        pumping = asyncio.ensure_future(pump())
                        try:
                            await updates(client, heard)
                        finally:
                            pumping.cancel()

        asyncio.run(go())


async def updates(client: Client, heard: asyncio.Queue[dict[str, Any]]) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    # The upstream subscription may settle just after the downstream one (a modern upstream's
    # listen stream is reopened with the URI): touch until the update arrives, within a bound.
    got: dict[str, Any] | None = None
    while got is None:
        assert loop.time() < deadline, "the upstream's update never reached the subscriber"
        assert (await client.call_tool("touch", {"uri": "note://a"})).text == "touched"
        try:
            got = await asyncio.wait_for(heard.get(), 0.5)
        except TimeoutError:
            continue
    assert got["method"] == "notifications/resources/updated"
    assert got["params"]["uri"] == "note://a"
    # An update of a URI nobody subscribed to is not passed on.
    while not heard.empty():
        heard.get_nowait()
    assert (await client.call_tool("touch", {"uri": "note://b"})).text == "touched"
    assert (await client.call_tool("touch", {"uri": "note://a"})).text == "touched"
    got = await asyncio.wait_for(heard.get(), 10)
    assert got["params"]["uri"] == "note://a"  # b's came first upstream, and was not relayed
