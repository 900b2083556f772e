"""Issue 38's mount check: a parent with two mounted children and one proxied upstream lists all
three namespaces, and an input_required flow in each completes on both eras."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import rondo
from rondo import elicit
from rondo.client import Client, ElicitRequest, ElicitResult
from rondo.gateway import mount
from tests.helpers.gateway_upstream import served, upstream_server

ERAS = ["2025-11-25", "2026-07-28"]
COLOR = elicit.form("Pick a color", {
    "type": "object",
    "properties": {"color": {"type": "string", "enum": ["red", "blue"]}},
    "required": ["color"],
})


def blue(request: ElicitRequest) -> Any:
    return ElicitResult("accept", {"color": "blue"})


def child(name: str) -> rondo.Server:
    made = rondo.Server(name)

    @made.tool
    def pick(ctx: rondo.Context) -> str:
        """Asks for a color."""
        return f"{name} got {ctx.ask('color', COLOR).content['color']}"

    return made


@pytest.mark.parametrize("protocol", ERAS)
def test_two_children_and_a_proxied_upstream_under_one_parent(protocol: str) -> None:
    with served(upstream_server().asgi()) as (url, _):
        parent = rondo.Server("parent")
        mount(parent, child("alpha"), namespace="alpha")
        mount(parent, child("beta"), namespace="beta")
        mount(parent, rondo.proxy(url, timeout=10.0), namespace="up")

        async def go() -> None:
            async with parent.started(), Client(parent, protocol=protocol,
                                                on_elicit=blue) as client:
                names = sorted(t.name for t in await client.list_tools())
                assert {name.split("_", 1)[0] for name in names} == {"alpha", "beta", "up"}
                assert "up_cleanup" in names and "up_color" in names
                assert (await client.call_tool("alpha_pick")).text == "alpha got blue"
                assert (await client.call_tool("beta_pick")).text == "beta got blue"
                assert (await client.call_tool("up_color")).text == "color=blue"
                assert (await client.call_tool("up_cleanup", {"folder": "/m"})).text == (
                    "step 2: /m blue")
                assert (await client.get_prompt("up_greet", {"name": "Ada"})).messages[
                    0].content["text"] == "Hello Ada"
                assert (await client.read_resource("up://city/Rome")).text == "rain in Rome"
                # The proxy's completion relay, reached through the parent: the namespaced
                # prompt name goes upstream as the upstream's own.
                done = await client.complete({"type": "ref/prompt", "name": "up_greet"},
                                             "name", "A")
                assert done.values == ["greet:Ada", "greet:Alan"]
                done = await client.complete(
                    {"type": "ref/resource", "uri": "up://city/{name}"}, "name", "G")
                assert done.values == ["up://city/{name}:Grace"]

        asyncio.run(go())
