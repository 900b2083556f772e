"""`tags=` on the decorators: validated at registration, readable on the registered component,
and never put on the wire."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import rondo
from rondo.client import Client


def test_tags_are_readable_on_every_kind_of_component() -> None:
    server = rondo.Server("t")

    @server.tool(tags={"read", "public"})
    def a() -> str:
        """A."""
        return "a"

    @server.prompt(tags=("read",))
    def p() -> str:
        """P."""
        return "p"

    @server.resource("t://static", tags=iter(["docs"]))
    def r() -> str:
        return "r"

    @server.resource("t://items/{id}", tags=["docs", "docs"])
    def item(id: str) -> str:
        return id

    @server.tool
    def untagged() -> str:
        """U."""
        return "u"

    assert server.tools["a"].tags == frozenset({"read", "public"})
    assert server.prompts["p"].tags == frozenset({"read"})
    assert server.resources["t://static"].tags == frozenset({"docs"})
    assert server.templates["t://items/{id}"].tags == frozenset({"docs"})
    assert server.tools["untagged"].tags == frozenset()

    async def go() -> dict[str, Any]:
        async with Client(server) as client:
            return {"tools": [t.meta for t in await client.list_tools()],
                    "prompts": [x.meta for x in await client.list_prompts()],
                    "resources": [x.meta for x in await client.list_resources()],
                    "templates": [x.meta for x in await client.list_resource_templates()]}

    assert asyncio.run(go()) == {"tools": [None, None], "prompts": [None],
                                 "resources": [None], "templates": [None]}


@pytest.mark.parametrize(("bad", "error", "match"), [
    ("read", TypeError, "tags= is a set of strings"),
    (b"read", TypeError, "tags= is a set of strings"),
    (3, TypeError, "tags= is a set of strings"),
    ({""}, ValueError, "each tag is a non-empty string"),
    ({" read"}, ValueError, "each tag is a non-empty string"),
    ([1], ValueError, "each tag is a non-empty string"),
])
def test_bad_tags_are_refused_at_registration(bad: Any, error: type[Exception], match: str) -> None:
    server = rondo.Server("t")
    with pytest.raises(error, match=match):
        server.tool(tags=bad)
    with pytest.raises(error, match=match):
        server.prompt(tags=bad)
    with pytest.raises(error, match=match):
        server.resource("t://x", tags=bad)
    assert not server.tools and not server.prompts and not server.resources
