"""Misconfiguration fails when the server is built, not at request time; and the public helpers
that read answers refuse what is malformed. Only public entry points (rondo.Server, rondo.Client
in memory, rondo.elicit / rondo.kinds)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import rondo
from rondo import elicit, kinds
from rondo.client import Client

META_FREE = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


@pytest.mark.parametrize(
    ("options", "message"),
    [({"name": ""}, "non-empty name"), ({"name": 3}, "non-empty name"),
     ({"name": "s", "page_size": 0}, "page_size"), ({"name": "s", "page_size": "10"}, "page_size")],
)
def test_bad_server_options_fail_at_construction(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        rondo.Server(**options)


def test_server_info_carries_optional_fields() -> None:
    icons = [{"src": "https://example.com/i.png", "mimeType": "image/png"}]
    server = rondo.Server("s", "2.0", title="S", website_url="https://example.com", icons=icons)
    assert server.info == {"name": "s", "version": "2.0", "title": "S",
                           "websiteUrl": "https://example.com", "icons": icons}

    async def go() -> Any:
        async with Client(server) as client:
            return client.server_info

    assert asyncio.run(go())["icons"] == icons


def test_duplicate_registrations_fail() -> None:
    server = rondo.Server("dups")

    @server.tool
    def a() -> str:
        """A."""
        return "a"

    with pytest.raises(ValueError, match="tool 'a' is registered twice"):
        server.tool(a)
    with pytest.raises(ValueError, match="input_schema must have type 'object'"):
        server.tool(name="b", input_schema={"type": "array"})(a)

    @server.resource("notes://one")
    def one() -> str:
        return "1"

    with pytest.raises(ValueError, match="resource 'notes://one' is registered twice"):
        server.resource("notes://one")(one)

    @server.resource("notes://{id}")
    def note(id: str) -> str:
        return id

    with pytest.raises(ValueError, match="resource template 'notes://{id}' is registered twice"):
        server.resource("notes://{id}")(note)
    with pytest.raises(ValueError, match="must be absolute"):
        server.resource("relative/path")(one)

    @server.prompt
    def hello() -> str:
        """Hello."""
        return "hi"

    with pytest.raises(ValueError, match="prompt 'hello' is registered twice"):
        server.prompt(hello)


@pytest.mark.parametrize(
    ("uri", "message"),
    [("notes://{id}/{id}", "appears twice"), ("notes://{id}}", "unsupported"),
     ("notes://{a}x{", "unsupported"), ("notes://}{a}", "unsupported")],
)
def test_bad_resource_templates_fail_at_registration(uri: str, message: str) -> None:
    server = rondo.Server("templates")
    with pytest.raises(ValueError, match=message):
        server.resource(uri)(lambda **kw: "x")


def test_removing_components_hides_them_from_clients() -> None:
    server = rondo.Server("removals")
    for n in ("t1", "t2"):
        server.tool(name=n, description="T.")(lambda: "t")
        server.prompt(name=f"p{n[1]}", description="P.")(lambda: "p")
        server.resource(f"mem://static{n[1]}")(lambda: "s")
        server.resource(f"mem://{{name}}/{n}")(lambda name: name)

    async def listing() -> tuple[list[str], list[str], list[str], list[str]]:
        async with Client(server) as client:
            return ([x.name for x in await client.list_tools()],
                    [x.name for x in await client.list_prompts()],
                    [x.uri for x in await client.list_resources()],
                    [x.uri_template for x in await client.list_resource_templates()])

    assert asyncio.run(listing()) == (["t1", "t2"], ["p1", "p2"], ["mem://static1", "mem://static2"],
                                      ["mem://{name}/t1", "mem://{name}/t2"])
    server.remove_tool("t1")
    server.remove_prompt("p1")
    server.remove_resource("mem://static1")
    server.remove_resource("mem://{name}/t1")
    assert asyncio.run(listing()) == (["t2"], ["p2"], ["mem://static2"], ["mem://{name}/t2"])
    with pytest.raises(KeyError, match="^'t1'$"):
        server.remove_tool("t1")


def test_unknown_transport_name_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown transport 'carrier-pigeon'"):
        rondo.Server("s").run("carrier-pigeon")


# -- reading answers (the explicit style) ---------------------------------------------------------

CONFIRM = elicit.form("Sure?", META_FREE)


def explicit_server() -> rondo.Server:
    server = rondo.Server("explicit")

    @server.tool
    def confirm(ctx: rondo.Context) -> object:
        """Read the answer by hand."""
        answer = elicit.response(ctx, "ok", CONFIRM)
        if answer is elicit.MISSING:
            return rondo.InputRequired({"ok": CONFIRM})
        return f"ok={answer.content['ok']}"

    return server


def call_with(responses: dict[str, Any]) -> Any:
    async def go() -> Any:
        async with Client(explicit_server(), protocol="2026-07-28") as client:
            return await client.request("tools/call", {"name": "confirm", "arguments": {},
                                                       "inputResponses": responses})

    return asyncio.run(go())


def test_a_well_formed_answer_is_read() -> None:
    result = call_with({"ok": {"action": "accept", "content": {"ok": True}}})
    assert result["content"][0]["text"] == "ok=True"


def test_a_malformed_answer_is_the_clients_error() -> None:
    with pytest.raises(rondo.McpError, match="^Invalid input response for 'ok': content.ok: must be a boolean, "
                       "got string$") as caught:
        call_with({"ok": {"action": "accept", "content": {"ok": "yes"}}})
    assert caught.value.code == -32602


def test_kind_for_names_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="must be an object, got array"):
        kinds.kind_for([])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown elicitation mode 'voice'"):
        kinds.kind_for({"method": "elicitation/create", "params": {"mode": "voice"}})
    with pytest.raises(ValueError, match="'tools/call' is not an input request method"):
        kinds.kind_for({"method": "tools/call"})
    assert kinds.kind_for(CONFIRM).name == "form"


def test_missing_capabilities_merges_every_need() -> None:
    requests = {"a": CONFIRM, "b": elicit.url("Sign in", "https://example.com/in"),
                "c": rondo.sampling.create_message("hi", 5)}
    missing = kinds.missing_capabilities(requests, {"elicitation": {"form": {}}})
    assert missing == {"elicitation": {"url": {}}, "sampling": {}}
    everything = {"elicitation": {"form": {}, "url": {}}, "sampling": {}}
    assert kinds.missing_capabilities(requests, everything) == {}
