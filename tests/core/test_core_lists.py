"""`server/discover`, the four list methods, pagination and caching hints (spec digest §1.5, §6,
§7.9; conformance contract §4.4-§4.5)."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rondo
from tests.helpers.helpers_core import INVALID_PARAMS, SERVER_INFO, VERSION, Client

LISTS = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
}


def populated(n: int = 7, **options) -> rondo.Server:
    """A server with `n` tools, prompts, resources and templates, registered in a known order."""
    server = rondo.Server("lists", "2.0.0", state=None, **options)
    # Registered in an order that is neither alphabetical nor reversed.
    order = [(i * 3) % n for i in range(n)] if n % 3 else list(range(n))
    for i in order:
        server.tool(name=f"tool_{i}", description=f"Tool {i}")(lambda: "x")
        server.prompt(name=f"prompt_{i}", description=f"Prompt {i}")(lambda: "x")
        server.resource(f"mem://r/{i}", name=f"r{i}")(lambda: "x")
        server.resource(f"mem://t{i}/{{id}}", name=f"t{i}")(lambda id: id)
    return server


def names(items: list[dict]) -> list[str]:
    return [item.get("name") or item.get("uri") for item in items]


def walk(client: Client, method: str) -> tuple[list[dict], list[dict]]:
    """Every item of a paginated list, and every page's result."""
    key = LISTS[method]
    items: list[dict] = []
    pages: list[dict] = []
    params: dict = {}
    for _ in range(100):
        page = client.result(method, params)
        pages.append(page)
        items.extend(page[key])
        if "nextCursor" not in page:
            return items, pages
        params = {"cursor": page["nextCursor"]}
    raise AssertionError("pagination does not end")


# -- discover -----------------------------------------------------------------------------------


def test_discover_shape():
    server = populated(2, title="Lists", website_url="https://example.com")
    server.completion(lambda ref, argument, context: [])
    server.instructions = "Use the tools."
    result = Client(server, caps={}).result("server/discover")
    assert result["supportedVersions"] == [VERSION]
    assert result["capabilities"] == {
        "logging": {},
        "tools": {"listChanged": True},
        "prompts": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "completions": {},
    }
    assert result["instructions"] == "Use the tools."
    assert result["ttlMs"] == 300_000 and result["cacheScope"] == "public"
    assert result["_meta"][SERVER_INFO] == {
        "name": "lists", "version": "2.0.0", "title": "Lists", "websiteUrl": "https://example.com",
    }
    assert "serverInfo" not in result  # moved to _meta (spec PR #3002)


def test_discover_ttl_is_configurable():
    server = rondo.Server("d", state=None, discover_ttl_ms=0)
    result = Client(server).result("server/discover")
    assert result["ttlMs"] == 0 and result["cacheScope"] == "public"


def test_discover_capabilities_follow_what_is_registered():
    server = rondo.Server("d", state=None)
    client = Client(server)
    assert set(client.result("server/discover")["capabilities"]) == {"logging"}
    server.prompt(name="p", description="P")(lambda: "x")
    assert set(client.result("server/discover")["capabilities"]) == {"logging", "prompts"}


# -- lists ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", list(LISTS))
def test_lists_are_complete_deterministic_and_in_registration_order(method):
    server = populated(7, page_size=3)
    client = Client(server)
    first, pages = walk(client, method)
    assert len(first) == 7
    assert len(pages) == 3 and [len(p[LISTS[method]]) for p in pages] == [3, 3, 1]
    for _ in range(2):
        again, _ = walk(client, method)
        assert again == first
    assert len(set(names(first))) == 7
    suffixes = [int(name.rsplit("_", 1)[-1].lstrip("rt")) for name in names(first)]
    assert suffixes == [0, 3, 6, 2, 5, 1, 4]  # registration order, not sorted


@pytest.mark.parametrize("method", list(LISTS))
def test_every_page_carries_cache_hints_and_the_same_scope(method):
    server = populated(5, page_size=2, list_ttl_ms=1234, list_cache_scope="private")
    _, pages = walk(Client(server), method)
    assert {(p["ttlMs"], p["cacheScope"]) for p in pages} == {(1234, "private")}
    assert all(p["resultType"] == "complete" for p in pages)


def test_default_list_hints_are_public():
    page = Client(populated(1)).result("tools/list")
    assert page["ttlMs"] == 300_000 and page["cacheScope"] == "public"


def test_exact_multiple_of_page_size_has_no_dangling_cursor():
    server = populated(4, page_size=2)
    _, pages = walk(Client(server), "tools/list")
    assert len(pages) == 2 and "nextCursor" not in pages[-1]


def test_empty_list_is_one_page():
    server = rondo.Server("e", state=None)
    server.tool(name="only", description="x")(lambda: "x")
    server.remove_tool("only")
    server.tool(name="again", description="x")(lambda: "x")
    assert [t["name"] for t in Client(server).result("tools/list")["tools"]] == ["again"]


def test_cursors_are_opaque_strings():
    server = populated(5, page_size=2)
    cursor = Client(server).result("tools/list")["nextCursor"]
    assert isinstance(cursor, str) and cursor and "2" not in cursor


@pytest.mark.parametrize(
    "cursor",
    ["", "nonsense", "!!!", 5, [], {"offset": 2},
     base64.urlsafe_b64encode(b"o999").decode(), base64.urlsafe_b64encode(b"o-1").decode(),
     base64.urlsafe_b64encode(b"x2").decode()],
)
def test_invalid_cursors_are_invalid_params(cursor):
    server = populated(5, page_size=2)
    client = Client(server)
    error = client.error("tools/list", {"cursor": cursor})
    assert error["code"] == INVALID_PARAMS


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_arbitrary_cursors_never_crash(cursor):
    client = _FUZZ
    response = client.call("prompts/list", {"cursor": cursor})
    if "error" in response:
        assert response["error"]["code"] == INVALID_PARAMS
    else:
        assert isinstance(response["result"]["prompts"], list)


_FUZZ = Client(populated(5, page_size=2))


def test_tool_listing_shape():
    server = rondo.Server("t", state=None)

    @server.tool(title="Adder", annotations={"readOnlyHint": True}, meta={"x.y/z": 1})
    def add(a: int, b: float = 1.0) -> float:
        """Add two numbers."""
        return a + b

    (tool,) = Client(server).result("tools/list")["tools"]
    assert tool["name"] == "add" and tool["title"] == "Adder"
    assert tool["description"] == "Add two numbers."
    assert tool["annotations"] == {"readOnlyHint": True}
    assert tool["_meta"] == {"x.y/z": 1}
    schema = tool["inputSchema"]
    assert schema["type"] == "object"
    assert schema["properties"]["a"]["type"] == "integer"
    assert schema["properties"]["b"]["type"] == "number"
    assert schema["required"] == ["a"]
    assert tool["outputSchema"]["type"] == "number"


def test_resource_and_template_listing_shape():
    server = rondo.Server("r", state=None)

    @server.resource("mem://static", name="static", mime_type="text/plain", description="S", size=3)
    def static() -> str:
        return "abc"

    @server.resource("mem://notes/{id}", name="note", mime_type="text/markdown")
    def note(id: str) -> str:
        """One note."""
        return id

    client = Client(server)
    assert client.result("resources/list")["resources"] == [
        {"uri": "mem://static", "name": "static", "description": "S", "mimeType": "text/plain",
         "size": 3}
    ]
    assert client.result("resources/templates/list")["resourceTemplates"] == [
        {"uriTemplate": "mem://notes/{id}", "name": "note", "description": "One note.",
         "mimeType": "text/markdown"}
    ]


def test_prompt_listing_shape():
    server = rondo.Server("p", state=None)

    @server.prompt
    def review(code: str, style: str = "terse") -> str:
        """Review code."""
        return code

    (prompt,) = Client(server).result("prompts/list")["prompts"]
    assert prompt["name"] == "review" and prompt["description"] == "Review code."
    args = {a["name"]: a.get("required", False) for a in prompt["arguments"]}
    assert args == {"code": True, "style": False}


def test_list_changes_are_seen_without_restart():
    server = populated(2)
    client = Client(server)
    server.remove_tool("tool_0")
    assert "tool_0" not in names(client.result("tools/list")["tools"])
