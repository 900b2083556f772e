"""Early, plain errors: a nested object in a per-call form names the field and what is allowed;
prompt parameters a string cannot become are refused at registration; a tool without a
docstring or type hints gets a one-line warning (opt-out)."""

from __future__ import annotations

import asyncio
import dataclasses
import warnings
from typing import Any, Literal

import pytest

import rondo
from rondo import elicit
from rondo.client import Client
from rondo.server.undocumented import UndocumentedToolWarning

NESTED = {"type": "object", "properties": {
    "name": {"type": "string"},
    "address": {"type": "object", "properties": {"city": {"type": "string"}}},
}}


def test_nested_object_in_a_form_names_the_field_and_the_rule() -> None:
    with pytest.raises(ValueError, match="a form field cannot be a nested object") as exc:
        elicit.form("Where?", NESTED)
    text = str(exc.value)
    assert text.startswith("requestedSchema.properties.address.type:")
    assert "cannot be a nested object" in text and "string, number, integer, boolean" in text


@dataclasses.dataclass
class Address:
    city: str


@dataclasses.dataclass
class Person:
    name: str
    address: Address


def test_nested_dataclass_form_says_forms_are_flat() -> None:
    with pytest.raises(ValueError, match=r"address.*not a form primitive.*forms are flat"):
        elicit.form("Who?", Person)


def test_a_form_built_per_call_fails_the_call_with_the_field_named() -> None:
    server = rondo.Server("forms", state=None)

    @server.tool
    def where(ctx: rondo.Context) -> str:
        """Asks with a nested form, built per call."""
        ctx.ask("where", elicit.form("Where?", NESTED))
        return "unreachable"

    async def go() -> Any:
        async with Client(server, on_elicit=lambda r: {"action": "accept", "content": {}}) as client:
            return await client.call_tool("where", {})

    result = asyncio.run(go())
    assert result.is_error and "properties.address" in result.text and "nested object" in result.text


@pytest.mark.parametrize("annotation", ["list[str]", "dict[str, int]", "tuple[int, int]"])
def test_prompt_parameters_that_a_string_cannot_become_are_refused(annotation: str) -> None:
    server = rondo.Server("prompts", state=None)
    namespace: dict[str, Any] = {}
    exec(f"def summary(topic: str, extra: {annotation}) -> str:\n    return topic\n", namespace)
    with pytest.raises(ValueError, match=r"parameter 'extra' is annotated .*prompt arguments are strings"):
        server.prompt(namespace["summary"])


def test_prompt_scalars_still_convert_from_strings() -> None:
    server = rondo.Server("prompts", state=None)

    @server.prompt
    def plan(days: int, mode: Literal["fast", "slow"] = "fast", note: str | None = None) -> str:
        """Plan."""
        return f"{days} {mode}"

    assert [a["name"] for a in server.prompts["plan"].wire["arguments"]] == ["days", "mode", "note"]


def test_undocumented_tool_warns_once_at_its_line() -> None:
    server = rondo.Server("terse", state=None)
    with pytest.warns(UndocumentedToolWarning) as record:
        @server.tool
        def add(a, b: int):  # type: ignore[no-untyped-def]  # noqa: ANN001
            return a + b
    (warning,) = record.list
    text = str(warning.message)
    assert "tool 'add'" in text and "no docstring" in text and "no type hints on a" in text
    assert "\n" not in text and "warn_undocumented=False" in text
    assert warning.filename == __file__


def test_documented_tools_and_the_opt_out_are_silent() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", UndocumentedToolWarning)
        server = rondo.Server("documented", state=None)

        @server.tool
        def add(a: int, b: int, ctx: rondo.Context) -> int:
            """Add two numbers."""
            return a + b

        quiet = rondo.Server("quiet", state=None, warn_undocumented=False)

        @quiet.tool
        def bare(a):  # type: ignore[no-untyped-def]  # noqa: ANN001
            return a
