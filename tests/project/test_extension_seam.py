"""A second extension, built only from the public seam: a method row of its own (with the
facts it carries), a wrap of `tools/call` that takes some tools and leaves the others their
fast lanes, and a client half that answers a call through the client's public facade.
If the seam needed anything private, this file would have to reach for it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

import rondo
from rondo.client import CallToolResult, Client
from rondo.server import Method, Wrap

NAME = "example.test/shout"


class Shout:
    """Server half: `shout/echo` (its `Mcp-Name` is the text), and `tools/call` wrapped for
    tools whose name starts with `loud_`: their text comes back upper-cased."""

    name = NAME

    def __init__(self) -> None:
        self.wrapped: list[str] = []

    def capability(self, server: rondo.Server) -> Mapping[str, Any] | None:
        return {"loud": True}

    def methods(self) -> Iterable[Method]:
        return [Method("shout/echo", self._echo, name_field="text")]

    def wraps(self) -> Iterable[Wrap]:
        return [Wrap("tools/call", self._loud, tools=lambda tool: tool.name.startswith("loud_"))]

    async def _echo(self, core: Any, req: Any) -> dict[str, Any]:
        return {"text": str(req.params.get("text", "")).upper()}

    async def _loud(self, core: Any, req: Any, call_next: Any) -> dict[str, Any]:
        self.wrapped.append(req.params["name"])
        result: dict[str, Any] = await call_next(core, req)
        for block in result.get("content", []):
            if block.get("type") == "text":
                block["text"] = block["text"].upper()
        return result


class ShoutClient:
    """Client half: declares the extension; a call of the pseudo-tool `shout` goes to
    `shout/echo` through `Client.request` (the facade), not to `tools/call`."""

    name = NAME
    capability: Mapping[str, Any] = {}
    result_types: Mapping[str, Any] = {}

    async def on_call_tool(self, client: Client, name: str, params: dict[str, Any]) -> CallToolResult | None:
        if name != "shout":
            return None
        answer = await client.request("shout/echo", {"text": params["arguments"]["text"]})
        return msgspec.convert({"content": [{"type": "text", "text": answer["text"]}]}, CallToolResult)


def build() -> tuple[rondo.Server, Shout]:
    server = rondo.Server("shouty")

    @server.tool
    def loud_greet(who: str) -> str:
        return f"hello {who}"

    @server.tool
    def quiet(who: str) -> str:
        return f"hello {who}"

    shout = Shout()
    server.extension(shout)
    return server, shout


def test_the_wrap_takes_its_tools_and_leaves_the_others_their_fast_lanes() -> None:
    server, shout = build()
    core = server.core
    assert core.express  # a wrap that names its tools leaves the lane on
    assert core.takes(server.tools["loud_greet"]) and not core.takes(server.tools["quiet"])
    typed = core.typed_calls()
    assert b"quiet" in typed.header_names and b"loud_greet" not in typed.header_names

    async def go() -> tuple[str, str]:
        async with Client(server) as client:
            loud = await client.call_tool("loud_greet", {"who": "ann"})
            quiet = await client.call_tool("quiet", {"who": "bob"})
            return loud.text, quiet.text

    assert asyncio.run(go()) == ("HELLO ANN", "hello bob")
    assert shout.wrapped == ["loud_greet"]  # the plain tool never reached the wrap


def test_its_own_method_and_client_half_through_the_public_facade() -> None:
    from rondo.wire.meta import NAME_FIELDS

    server, _ = build()
    assert NAME_FIELDS["shout/echo"] == "text"  # the row said so; no list was edited

    async def go() -> tuple[Any, Any, Any]:
        async with Client(server, extensions=[ShoutClient()]) as client:
            raw = await client.request("shout/echo", {"text": "hi"})
            via_half = await client.call_tool("shout", {"text": "hey"})
            caps = client.server_capabilities
            return raw, via_half, caps

    raw, via_half, caps = asyncio.run(go())
    assert raw["text"] == "HI"
    assert via_half.text == "HEY"
    assert caps["extensions"][NAME] == {"loud": True}
