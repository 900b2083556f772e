"""Laziness: `from_openapi` reads the document's outline at build and translates a tool's
schemas on first need (every listed tool's on the first tools/list, one tool's on its first
call), each shared schema once; a schema that cannot be translated leaves its tool out then,
with a warning and a clean tool error, never a crash. Counted on the document's `Translator`
(tests/openapi/test_openapi_github.py counts the same on GitHub's REST description)."""

from __future__ import annotations

import asyncio
import warnings

import httpx
import pytest

import rondo
from rondo.client import Client
from rondo.openapi import OperationSkipped, from_openapi
from rondo.openapi import build as build_module
from rondo.openapi.schemas import Translator

REF = {"$ref": "#/components/schemas/Pet"}
JSON_PET = {"200": {"description": "", "content": {"application/json": {"schema": REF}}}}


def _query(name, schema):
    return {"name": name, "in": "query", "schema": schema}


DOCUMENT = {
    "openapi": "3.0.3", "info": {"title": "Pets", "version": "1"},
    "paths": {
        "/pets": {"get": {"operationId": "list", "parameters": [_query("owner", {
            "$ref": "#/components/schemas/Owner"})], "responses": JSON_PET},
                  "post": {"operationId": "add", "requestBody": {"content": {
                      "application/json": {"schema": REF}}}, "responses": JSON_PET}},
        "/pets/{id}": {"get": {"operationId": "get", "parameters": [
            {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}],
            "responses": JSON_PET}},
        "/broken": {"get": {"operationId": "broken", "parameters": [_query("q", {
            "$ref": "#/components/schemas/Nope"})], "responses": {"204": {"description": ""}}}},
    },
    "components": {"schemas": {
        "Pet": {"type": "object", "properties": {"name": {"type": "string"}, "owner": {
            "$ref": "#/components/schemas/Owner"}}},
        "Owner": {"type": "object", "properties": {"name": {"type": "string", "nullable": True}}},
        "Unused": {"type": "string"},
    }},
}


@pytest.fixture
def counted(monkeypatch):
    """Every Translator from_openapi makes, to read its counts."""
    made: list[Translator] = []

    class Counting(Translator):
        def __init__(self, doc):
            super().__init__(doc)
            made.append(self)

    monkeypatch.setattr(build_module, "Translator", Counting)
    return made


def _server(**options):
    seen = []

    def api(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}")
        return httpx.Response(200, json={"name": "Rex"})

    client = httpx.AsyncClient(base_url="https://pets.example",
                               transport=httpx.MockTransport(api))
    return from_openapi(DOCUMENT, client, unconfirmed="run", **options), seen


def _listed(server, **client_options):
    """The server's tools as a client lists them, by name."""
    async def main():
        async with Client(server, **client_options) as mcp:
            return {t.name: t for t in await mcp.list_tools()}

    return asyncio.run(main())


def _filled(server):
    return sorted(n for n, t in server.tools.items() if "properties" in t.wire["inputSchema"])


def test_building_translates_no_schema(counted):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the broken schema is not read at build
        server, _ = _server()
    [tr] = counted
    assert tr.roots == 0 and tr.built == {}
    assert list(server.tools) == ["list", "add", "get", "broken"]
    assert _filled(server) == []


def test_a_call_translates_only_its_own_tools_schemas(counted):
    server, seen = _server()
    [tr] = counted

    async def main():
        async with Client(server) as mcp:
            got = await mcp.call_tool("get", {"id": 7})
            assert got.structured_content == {"name": "Rex"}

    asyncio.run(main())
    assert seen == ["GET /pets/7"]
    assert _filled(server) == ["get"]
    assert tr.roots == 2  # its one parameter and its output
    assert tr.built == {"Pet": 1, "Owner": 1}  # what its output refers to, nothing else
    out = server.tools["get"].wire["outputSchema"]
    assert out["properties"]["owner"] == {"$ref": "#/$defs/Owner"}
    assert set(out["$defs"]) == {"Pet", "Owner"}


def test_the_first_listing_translates_each_shared_schema_once_and_the_next_nothing(counted):
    server, _ = _server()
    [tr] = counted

    async def main():
        async with Client(server) as mcp:
            with pytest.warns(OperationSkipped, match="GET /broken skipped: dangling"):
                first = await mcp.list_tools()
            roots = tr.roots
            again = await mcp.list_tools(refresh=True)
            assert tr.roots == roots  # cached: the second listing translates nothing
            return first, again

    first, again = asyncio.run(main())
    assert [t.name for t in first] == [t.name for t in again] == ["list", "add", "get"]
    # Pet is used by three tools and Owner by all of them: each translated once; Unused never.
    assert tr.built == {"Pet": 1, "Owner": 1}
    by_name = {t.name: t for t in first}
    assert by_name["list"].input_schema["properties"]["owner"] == {"$ref": "#/$defs/Owner"}
    assert by_name["add"].input_schema["properties"]["owner"] == {"$ref": "#/$defs/Owner"}
    assert by_name["add"].input_schema["$defs"]["Owner"]["properties"]["name"]["type"] == [
        "string", "null"]


def test_a_broken_tool_called_first_is_a_clean_tool_error_then_gone(counted):
    server, seen = _server()

    async def main():
        async with Client(server) as mcp:
            with pytest.warns(OperationSkipped, match="GET /broken skipped: dangling"):
                result = await mcp.call_tool("broken", {"q": "x"})
            assert result.is_error
            assert result.text == ("broken is not served: dangling $ref "
                                   "'#/components/schemas/Nope'")
            assert [t.name for t in await mcp.list_tools()] == ["list", "add", "get"]

    asyncio.run(main())
    assert seen == [] and "broken" not in server.tools


def test_def_names_do_not_depend_on_what_is_translated_first():
    schemas = {"a b": {"type": "string"}, "a_b": {"type": "integer"}}  # both clean to a_b
    document = {"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "paths": {
        "/x": {"get": {"operationId": "x", "parameters": [_query("q", {
            "$ref": "#/components/schemas/a_b"})], "responses": {"204": {"description": ""}}}},
        "/y": {"get": {"operationId": "y", "parameters": [_query("q", {
            "$ref": "#/components/schemas/a b"})], "responses": {"204": {"description": ""}}}},
    }, "components": {"schemas": schemas}}
    client = httpx.AsyncClient(base_url="https://t.example",
                               transport=httpx.MockTransport(lambda r: httpx.Response(204)))

    async def listed(server, call_first):
        async with Client(server) as mcp:
            if call_first is not None:
                await mcp.call_tool(call_first, {"q": "1"})
            return {t.name: t.input_schema for t in await mcp.list_tools()}

    schemas_seen = [asyncio.run(listed(from_openapi(document, client, unconfirmed="run"), first))
                    for first in (None, "x", "y")]
    assert schemas_seen[0] == schemas_seen[1] == schemas_seen[2]
    assert schemas_seen[0]["y"]["properties"]["q"] == {"$ref": "#/$defs/a_b"}  # document order
    assert schemas_seen[0]["x"]["properties"]["q"] == {"$ref": "#/$defs/a_b_2"}


def test_into_an_existing_server_the_listing_translates_too():
    server = rondo.Server("mine")

    @server.tool
    def hello() -> str:
        """Say hello."""
        return "hello"

    client = httpx.AsyncClient(base_url="https://pets.example")
    with pytest.warns(OperationSkipped, match="GET /broken skipped"):
        from_openapi(DOCUMENT, client, server=server)
        tools = _listed(server)
    assert list(tools) == ["hello", "list", "add", "get"]
    assert set(tools["add"].input_schema["properties"]) == {"name", "owner"}


def test_lazy_false_translates_everything_at_build(counted):
    with pytest.warns(OperationSkipped, match="GET /broken skipped: dangling"):
        server = from_openapi(DOCUMENT, httpx.AsyncClient(base_url="https://p.example"),
                              lazy=False)
    [tr] = counted
    assert _filled(server) == ["add", "get", "list"] and "broken" not in server.tools
    assert tr.built == {"Pet": 1, "Owner": 1}


def test_once_every_tool_is_translated_the_document_is_let_go():
    import gc
    import weakref

    class Doc(dict):  # a dict that can be weakly referenced
        pass

    document = Doc(DOCUMENT)
    gone = weakref.ref(document)
    client = httpx.AsyncClient(base_url="https://pets.example")
    with pytest.warns(OperationSkipped, match="GET /broken skipped"):
        server = from_openapi(document, client)
        del document
        gc.collect()
        assert gone() is not None  # held while tools wait for their schemas

        async def main():
            async with Client(server) as mcp:
                return await mcp.list_tools()

        asyncio.run(main())
    gc.collect()
    assert gone() is None


def test_with_warnings_as_errors_a_failed_listing_leaves_the_server_consistent():
    server, _ = _server()

    async def main():
        async with Client(server) as mcp:
            with warnings.catch_warnings():
                warnings.simplefilter("error", OperationSkipped)
                with pytest.raises(rondo.McpError, match="Internal error"):  # logged, not shown
                    await mcp.list_tools()
            return [t.name for t in await mcp.list_tools(refresh=True)]

    assert asyncio.run(main()) == ["list", "add", "get"]
    assert "broken" not in server.tools


def test_a_generated_server_keeps_the_express_lane():
    # The laziness wraps tools/list (an extension's `Wrap`), so no middleware sits in front of
    # every call: plain tools/call still takes the express lane, and no tool is claimed off it.
    with pytest.warns(OperationSkipped, match="GET /broken skipped"):
        server, _ = _server()
        core = server.core
        assert not core.middleware
        assert core.express and not any(core.takes(tool) for tool in server.tools.values())

        assert list(_listed(server)) == ["list", "add", "get"]
    assert core.express  # removing the broken tool at listing time left the lane on


def test_the_first_listing_translates_on_the_2025_era_too(counted):
    server, _ = _server()
    with pytest.warns(OperationSkipped, match="GET /broken skipped"):
        tools = _listed(server, protocol="2025-11-25")
    assert list(tools) == ["list", "add", "get"]
    assert set(tools["add"].input_schema["properties"]) == {"name", "owner"}


def test_two_documents_into_one_server_each_translate_on_the_listing():
    server = rondo.Server("both")
    client = httpx.AsyncClient(base_url="https://pets.example")
    other = {**DOCUMENT, "paths": {"/owners": {"get": {"operationId": "owners", "parameters": [
        _query("pet", {"$ref": "#/components/schemas/Pet"})], "responses": JSON_PET}}}}
    with pytest.warns(OperationSkipped, match="GET /broken skipped"):
        from_openapi(DOCUMENT, client, server=server)
        from_openapi(other, client, server=server)
        tools = _listed(server)
    assert list(tools) == ["list", "add", "get", "owners"]
    assert set(tools["owners"].input_schema["properties"]) == {"pet"}
