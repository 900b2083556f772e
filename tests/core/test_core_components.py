"""Tools, resources, prompts and completion as a client sees them (spec digest §7.1-§7.4)."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
from typing import Any, Literal

import pytest

import rondo
from rondo import McpError, ToolError, ToolResult
from rondo.content import ContentBlock, embedded, image, resource_link, text, user
from tests.helpers.helpers_core import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    Client,
    text_of,
)


@dataclasses.dataclass
class Point:
    x: int
    y: int


def make_server() -> rondo.Server:
    server = rondo.Server("components", state=None, read_ttl_ms=5, read_cache_scope="private")

    @server.tool
    def add(a: int, b: int = 10) -> int:
        """Add two integers."""
        return a + b

    @server.tool
    async def slow_upper(word: str) -> str:
        """Upper-case a word, asynchronously."""
        await asyncio.sleep(0)
        return word.upper()

    @server.tool
    def pick(color: Literal["red", "green"]) -> str:
        """Pick a color."""
        return color

    @server.tool
    def point(x: int, y: int) -> Point:
        """A structured point."""
        return Point(x, y)

    @server.tool
    def plain() -> str:
        """No output schema for plain text."""
        return "just text"

    @server.tool
    def fails() -> str:
        """Raise a ToolError."""
        raise ToolError("the record does not exist")

    @server.tool
    def crashes() -> str:
        """Raise something unexpected."""
        raise RuntimeError("boom")

    @server.tool
    def protocol_error() -> str:
        """Raise McpError."""
        raise McpError(INVALID_PARAMS, "bad thing", {"why": "because"})

    @server.tool
    def blocks() -> list[ContentBlock]:
        """Several content blocks."""
        return [
            "first",
            image(b"\x89PNG", "image/png"),
            embedded("mem://e", text="embedded", mime_type="text/plain"),
            resource_link("mem://l", "link"),
        ]

    @server.tool
    def full() -> ToolResult:
        """A hand-built result."""
        return ToolResult([text("custom")], structured={"k": [1, 2]}, is_error=True)

    @server.tool
    def nothing() -> None:
        """Returns nothing."""

    @server.resource("mem://static", mime_type="text/plain", ttl_ms=60_000, cache_scope="public")
    def static() -> str:
        return "static text"

    @server.resource("mem://binary", mime_type="application/octet-stream")
    def binary() -> bytes:
        return b"\x00\x01\xff"

    @server.resource("mem://notes/{id}", mime_type="text/plain")
    async def note(id: str) -> str:
        if id == "missing":
            return None  # type: ignore[return-value]
        return f"note {id}"

    @server.resource("mem://json")
    def data() -> dict[str, Any]:
        return {"a": 1}

    @server.prompt
    def greet(name: str, mood: str = "happy") -> str:
        """Greet someone."""
        return f"Hello {name}, you seem {mood}."

    @server.prompt
    async def conversation(topic: str) -> list[Any]:
        """A two-message conversation."""
        return [user(f"Tell me about {topic}"), {"role": "assistant", "content": "Sure."}]

    @server.completion
    def complete(ref: dict, argument: dict, context: dict) -> Any:
        if argument["name"] == "many":
            return [f"v{i}" for i in range(150)]
        if argument["name"] == "dict":
            return {"values": ["a", "b"], "total": 10, "hasMore": True}
        if argument["name"] == "ask":
            return rondo.InputRequired(state="nope")
        prefix = argument["value"]
        return [c for c in ("red", "green", "blue") if c.startswith(prefix)] + [
            f"ctx:{context.get('name', '')}"
        ]

    return server


@pytest.fixture(scope="module")
def client() -> Client:
    return Client(make_server())


# -- tools --------------------------------------------------------------------------------------


def test_schema_from_type_hints(client):
    tools = {t["name"]: t for t in client.result("tools/list")["tools"]}
    assert tools["add"]["inputSchema"]["properties"] == {
        "a": {"type": "integer"}, "b": {"type": "integer", "default": 10},
    }
    assert sorted(tools["pick"]["inputSchema"]["properties"]["color"]["enum"]) == ["green", "red"]
    assert "outputSchema" not in tools["blocks"]  # content-block hints are not structured output
    assert tools["point"]["outputSchema"]["type"] == "object"
    assert set(tools["point"]["outputSchema"]["required"]) == {"x", "y"}
    assert "outputSchema" not in tools["plain"]
    assert tools["fails"]["inputSchema"]["type"] == "object"


def test_sync_and_async_tools(client):
    assert client.tool("add", {"a": 1, "b": 2})["structuredContent"] == 3
    assert client.tool("add", {"a": 1})["structuredContent"] == 11
    assert text_of(client.tool("slow_upper", {"word": "hi"})) == "HI"


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({}, "a"),
        ({"a": "1"}, "int"),
        ({"a": 1, "extra": 2}, "extra"),
        ({"a": 1.5}, "int"),
        ({"a": True}, "int"),
    ],
)
def test_invalid_arguments_are_a_readable_tool_error(client, arguments, fragment):
    result = client.tool("add", arguments)
    assert result["isError"] is True
    message = text_of(result)
    assert fragment in message and len(message) < 300 and "\n" not in message


def test_enum_violation_is_a_tool_error(client):
    result = client.tool("pick", {"color": "blue"})
    assert result["isError"] is True and "color" in text_of(result)


def test_arguments_that_are_not_an_object_are_invalid_params(client):
    error = client.error("tools/call", {"name": "add", "arguments": [1, 2]})
    assert error["code"] == INVALID_PARAMS


@pytest.mark.parametrize("params", [{"name": "nope"}, {"name": 5}, {}])
def test_unknown_or_missing_tool_is_invalid_params(client, params):
    assert client.error("tools/call", params)["code"] == INVALID_PARAMS


def test_unknown_tool_names_the_tool(client):
    assert "nope" in client.error("tools/call", {"name": "nope"})["message"]


def test_tool_error_and_unexpected_exception(client):
    result = client.tool("fails")
    assert result["isError"] is True and text_of(result) == "the record does not exist"
    crashed = client.tool("crashes")
    # Masked by default: the model sees a reference, never the exception's text.
    assert crashed["isError"] is True and "boom" not in text_of(crashed)
    assert text_of(crashed).startswith("Internal error in tool 'crashes' (reference ")


def test_mcp_error_from_a_tool_is_a_json_rpc_error(client):
    error = client.error("tools/call", {"name": "protocol_error"})
    assert error == {"code": INVALID_PARAMS, "message": "bad thing", "data": {"why": "because"}}


def test_structured_output_has_a_text_copy(client):
    result = client.tool("point", {"x": 1, "y": 2})
    assert result["structuredContent"] == {"x": 1, "y": 2}
    assert result["content"] == [{"type": "text", "text": '{"x":1,"y":2}'}]
    assert "isError" not in result or result["isError"] is False


def test_content_helpers(client):
    content = client.tool("blocks")["content"]
    assert [c["type"] for c in content] == ["text", "image", "resource", "resource_link"]
    assert base64.b64decode(content[1]["data"]) == b"\x89PNG"
    assert content[2]["resource"] == {"uri": "mem://e", "mimeType": "text/plain", "text": "embedded"}
    assert content[3]["uri"] == "mem://l" and content[3]["name"] == "link"


def test_tool_result_passes_through(client):
    result = client.tool("full")
    assert result["content"] == [{"type": "text", "text": "custom"}]
    assert result["structuredContent"] == {"k": [1, 2]} and result["isError"] is True


def test_none_is_empty_content(client):
    assert client.tool("nothing")["content"] == []


def test_tool_results_carry_no_cache_hints(client):
    result = client.tool("add", {"a": 1})
    assert "ttlMs" not in result and "cacheScope" not in result


# -- resources ------------------------------------------------------------------------------------


def test_static_resource_with_its_own_cache_hints(client):
    result = client.result("resources/read", {"uri": "mem://static"})
    assert result["contents"] == [{"uri": "mem://static", "mimeType": "text/plain", "text": "static text"}]
    assert (result["ttlMs"], result["cacheScope"]) == (60_000, "public")


def test_server_read_hints_apply_by_default(client):
    result = client.result("resources/read", {"uri": "mem://binary"})
    assert (result["ttlMs"], result["cacheScope"]) == (5, "private")
    assert base64.b64decode(result["contents"][0]["blob"]) == b"\x00\x01\xff"


def test_default_read_hints():
    server = rondo.Server("r", state=None)
    server.resource("mem://x")(lambda: "x")
    result = Client(server).result("resources/read", {"uri": "mem://x"})
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")


def test_template_resource(client):
    result = client.result("resources/read", {"uri": "mem://notes/42"})
    assert result["contents"] == [{"uri": "mem://notes/42", "mimeType": "text/plain", "text": "note 42"}]


def test_structured_resource_is_json(client):
    (item,) = client.result("resources/read", {"uri": "mem://json"})["contents"]
    assert item["mimeType"] == "application/json" and item["text"] == '{"a":1}'


@pytest.mark.parametrize("uri", ["mem://nope", "mem://notes/", "mem://notes/a/b", "other://static"])
def test_resource_not_found(client, uri):
    error = client.error("resources/read", {"uri": uri})
    assert error["code"] == INVALID_PARAMS
    assert error["message"] == "Resource not found"
    assert error["data"] == {"uri": uri}


def test_resource_handler_returning_none_is_not_an_empty_read(client):
    response = client.call("resources/read", {"uri": "mem://notes/missing"})
    assert "error" in response  # never `contents: []`
    assert response["error"]["code"] in (INVALID_PARAMS, INTERNAL_ERROR)


@pytest.mark.parametrize("uri", [None, 5, ["mem://static"]])
def test_read_without_a_string_uri_is_invalid_params(client, uri):
    params = {} if uri is None else {"uri": uri}
    assert client.error("resources/read", params)["code"] == INVALID_PARAMS


# -- prompts --------------------------------------------------------------------------------------


def test_prompt_with_arguments(client):
    result = client.result("prompts/get", {"name": "greet", "arguments": {"name": "Ann"}})
    assert result["description"] == "Greet someone."
    assert result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Hello Ann, you seem happy."}}
    ]
    assert "ttlMs" not in result


def test_async_prompt_with_messages(client):
    result = client.result("prompts/get", {"name": "conversation", "arguments": {"topic": "owls"}})
    assert [m["role"] for m in result["messages"]] == ["user", "assistant"]
    assert result["messages"][1]["content"] == {"type": "text", "text": "Sure."}


@pytest.mark.parametrize(
    "params",
    [
        {"name": "greet"},
        {"name": "greet", "arguments": {}},
        {"name": "greet", "arguments": {"mood": "sad"}},
        {"name": "greet", "arguments": "Ann"},
        {"name": "nope", "arguments": {"name": "Ann"}},
        {"arguments": {"name": "Ann"}},
    ],
)
def test_prompt_errors_are_invalid_params(client, params):
    assert client.error("prompts/get", params)["code"] == INVALID_PARAMS


def test_missing_prompt_argument_is_named(client):
    assert "name" in client.error("prompts/get", {"name": "greet", "arguments": {}})["message"]


# -- completion -----------------------------------------------------------------------------------


def complete(client: Client, name: str, value: str = "", **extra: Any) -> dict:
    params = {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": name, "value": value}}
    params.update(extra)
    return client.result("completion/complete", params)["completion"]


def test_completion_values_and_context(client):
    completion = complete(client, "mood", "g", context={"arguments": {"name": "Ann"}})
    assert completion["values"] == ["green", "ctx:Ann"]
    assert completion["total"] == 2 and completion["hasMore"] is False


def test_completion_is_capped_at_100(client):
    completion = complete(client, "many")
    assert len(completion["values"]) == 100
    assert completion["total"] == 150 and completion["hasMore"] is True


def test_completion_dict_passes_through(client):
    assert complete(client, "dict") == {"values": ["a", "b"], "total": 10, "hasMore": True}


def test_completion_for_a_resource_template(client):
    params = {"ref": {"type": "ref/resource", "uri": "mem://notes/{id}"},
              "argument": {"name": "id", "value": ""}}
    assert "values" in client.result("completion/complete", params)["completion"]


@pytest.mark.parametrize(
    "params",
    [
        {"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}},
        {"ref": {"type": "ref/tool", "name": "add"}, "argument": {"name": "a", "value": ""}},
        {"ref": {"type": "ref/prompt", "name": "greet"}},
        {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"value": ""}},
        {"argument": {"name": "a", "value": ""}},
        {"ref": "greet", "argument": {"name": "a", "value": ""}},
    ],
)
def test_completion_errors_are_invalid_params(client, params):
    assert client.error("completion/complete", params)["code"] == INVALID_PARAMS


def test_completion_without_a_hook_is_method_not_found():
    server = rondo.Server("nc", state=None)
    server.prompt(name="p", description="P")(lambda: "x")
    params = {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}}
    assert Client(server).error("completion/complete", params)["code"] == METHOD_NOT_FOUND


def test_completion_cannot_answer_input_required(client):
    """Only tools/call, prompts/get and resources/read may return input_required."""
    response = client.call(
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "ask", "value": ""}},
    )
    assert response["error"]["code"] == INTERNAL_ERROR
