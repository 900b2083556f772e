"""pydantic `Field(...)` on top-level tool parameters is honoured like msgspec's `Meta`, and enum
values keep their declared order (rondo.server.declared)."""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Any, Literal

import annotated_types
import pytest
from pydantic import Field

import rondo
from rondo.server.schema import ArgumentError, prompt_signature, tool_signature
from rondo.testing import connect

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}


def test_field_in_annotated_constrains_and_describes() -> None:
    def pick(
        n: Annotated[int, Field(ge=1, le=10, description="How many")],
        word: Annotated[str, Field(min_length=2, pattern="^[a-z]+$", title="Word")] = "ab",
    ) -> str:
        return word * n

    sig = tool_signature(pick)
    props = sig.input_schema["properties"]
    assert props["n"] == {"type": "integer", "description": "How many", "minimum": 1, "maximum": 10}
    assert props["word"] == {"type": "string", "title": "Word", "minLength": 2,
                             "pattern": "^[a-z]+$", "default": "ab"}
    assert sig.input_schema["required"] == ["n"]
    assert sig.bind({"n": 3}) == {"n": 3, "word": "ab"}
    for bad, says in (({"n": 0}, ">= 1"), ({"n": 11}, "<= 10"), ({"n": 1, "word": "A1"}, "matching regex")):
        with pytest.raises(ArgumentError, match=says):
            sig.bind(bad)


def test_field_as_a_default_value_is_metadata_and_its_default() -> None:
    def page(size: int = Field(20, gt=0, description="Page size"),  # noqa: B008
             tags: list[str] = Field(default_factory=list)) -> int:  # noqa: B008
        return size

    sig = tool_signature(page)
    assert sig.input_schema["properties"]["size"] == {
        "type": "integer", "description": "Page size", "exclusiveMinimum": 0, "default": 20}
    assert "required" not in sig.input_schema
    bound = sig.bind({})
    assert bound["size"] == 20 and bound["tags"] == []  # never the FieldInfo object itself
    with pytest.raises(ArgumentError, match="^Invalid arguments: 'size' expected int >= 1$"):
        sig.bind({"size": 0})


def test_annotated_types_constraints_work_too() -> None:
    def f(n: Annotated[float, annotated_types.Lt(1.5)]) -> float:
        return n

    sig = tool_signature(f)
    assert sig.input_schema["properties"]["n"] == {"type": "number", "exclusiveMaximum": 1.5}
    with pytest.raises(ArgumentError, match="^Invalid arguments: 'n' expected float < 1.5$"):
        sig.bind({"n": 2})


def test_field_options_without_an_effect_are_refused_at_registration() -> None:
    def f(n: Annotated[int, Field(alias="count")]) -> int:
        return n

    with pytest.raises(ValueError, match=r"parameter 'n'.*alias.*no effect"):
        tool_signature(f)


def test_the_wire_sees_and_enforces_the_field() -> None:
    server = rondo.Server("fields", state=None)

    @server.tool
    def repeat(n: Annotated[int, Field(ge=1, description="Times")]) -> str:
        """Repeat."""
        return "x" * n

    async def go() -> tuple[Any, Any]:
        conn = connect(server)
        listed = await conn.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}})
        called = await conn.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "repeat", "arguments": {"n": 0}, "_meta": META}})
        return listed, called

    import asyncio

    listed, called = asyncio.run(go())
    schema = listed["result"]["tools"][0]["inputSchema"]
    assert schema["properties"]["n"] == {"type": "integer", "description": "Times", "minimum": 1}
    assert called["result"]["isError"] is True, called  # a tool error the model can read
    assert called["result"]["content"][0]["text"] == "Invalid arguments: 'n' expected int >= 1"


class Level(enum.Enum):
    LOW = "low"
    HIGH = "high"
    MEDIUM = "medium"


@dataclasses.dataclass
class Order:
    size: Literal["small", "medium", "large"]
    level: Level


def test_enum_values_keep_their_declared_order() -> None:
    def f(size: Literal["small", "medium", "large"], level: Level,
          levels: list[Level], maybe: Literal[3, 1, 2] | None = None) -> Order:
        return Order(size, level)

    sig = tool_signature(f)
    props = sig.input_schema["properties"]
    assert props["size"]["enum"] == ["small", "medium", "large"]
    assert props["level"]["enum"] == ["low", "high", "medium"]
    assert props["levels"]["items"]["enum"] == ["low", "high", "medium"]
    assert props["maybe"]["anyOf"][0]["enum"] == [3, 1, 2]
    assert sig.output_schema is not None
    assert sig.output_schema["properties"]["size"]["enum"] == ["small", "medium", "large"]
    assert sig.output_schema["properties"]["level"]["enum"] == ["low", "high", "medium"]


def test_prompt_parameters_keep_fields_and_order() -> None:
    def p(topic: Annotated[str, Field(description="What about")]) -> str:
        return topic

    _, arguments = prompt_signature(p)
    assert arguments == [{"name": "topic", "description": "What about", "required": True}]
