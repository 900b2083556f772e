"""Schemas from type hints and argument binding (rondo.server.schema)."""

import dataclasses
import datetime
import enum
import importlib.util
import json
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

import jsonschema
import msgspec
import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rondo.server.content import ContentBlock, TextContent, ToolResult
from rondo.server.context import Context
from rondo.server.schema import (
    ArgumentError,
    prompt_signature,
    template_signature,
    tool_signature,
)
from tests.helpers.wire_schema import definition  # noqa: E402


def official(name: str) -> jsonschema.Draft202012Validator:
    return definition(name)


def check_schema(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    """A generated schema is valid 2020-12 and fits the official Tool.inputSchema shape."""
    jsonschema.Draft202012Validator.check_schema(schema)
    official("Tool").validate({"name": "t", "inputSchema": schema})
    return jsonschema.Draft202012Validator(schema)


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


@dataclasses.dataclass
class Point:
    """A point on the plane."""

    x: int
    y: int = 0


class Options(TypedDict, total=False):
    verbose: bool


class Box(msgspec.Struct):
    width: float
    label: str = ""


@dataclasses.dataclass
class Tree:
    value: int
    children: list["Tree"] = dataclasses.field(default_factory=list)


class Address(pydantic.BaseModel):
    street: str


class Person(pydantic.BaseModel):
    name: str
    age: int = 0
    address: Address | None = None


# -- schema generation ------------------------------------------------------------------------


def test_simple_tool_schema_is_a_flat_object():
    def add(a: int, b: int) -> int:
        return a + b

    sig = tool_signature(add)
    assert sig.input_schema == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    assert sig.param_names == ("a", "b")
    assert sig.context_param is None
    assert sig.is_async is False
    check_schema(sig.input_schema)


def test_no_parameters_gives_an_empty_closed_object():
    def ping() -> str:
        return "pong"

    sig = tool_signature(ping)
    assert sig.input_schema == {"type": "object", "properties": {}, "additionalProperties": False}
    assert sig.bind(None) == {}
    assert sig.bind({}) == {}
    with pytest.raises(ArgumentError, match="unknown argument 'x'"):
        sig.bind({"x": 1})
    check_schema(sig.input_schema)


def test_descriptions_defaults_and_constraints_land_on_properties():
    def search(
        query: Annotated[str, "What to look for"],
        limit: Annotated[int, msgspec.Meta(ge=1, le=50, description="Most results")] = 10,
        mode: Literal["fast", "exact"] = "fast",
        color: Color | None = None,
        note: str | None = None,
    ) -> str:
        return ""

    schema = tool_signature(search).input_schema
    props = schema["properties"]
    assert props["query"] == {"type": "string", "description": "What to look for"}
    assert props["limit"] == {
        "type": "integer",
        "description": "Most results",
        "minimum": 1,
        "maximum": 50,
        "default": 10,
    }
    assert props["mode"] == {"enum": ["fast", "exact"], "default": "fast"}  # declared order
    # Enums are inlined rather than left behind a $ref.
    assert props["color"]["anyOf"][0]["enum"] == ["red", "green"]
    assert "$defs" not in schema
    assert props["note"] == {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
    assert schema["required"] == ["query"]
    check_schema(schema)


def test_string_formats_for_datetimes_dates_and_uuids():
    def when(at: datetime.datetime, day: datetime.date, id: uuid.UUID) -> None:
        pass

    props = tool_signature(when).input_schema["properties"]
    assert props["at"] == {"type": "string", "format": "date-time"}
    assert props["day"] == {"type": "string", "format": "date"}
    assert props["id"] == {"type": "string", "format": "uuid"}
    kwargs = tool_signature(when).bind(
        {
            "at": "2026-07-28T10:00:00Z",
            "day": "2026-07-28",
            "id": "0b9b5a6e-0f7c-4f5d-9c79-1d1f0b4c2a11",
        }
    )
    assert kwargs["at"] == datetime.datetime(2026, 7, 28, 10, tzinfo=datetime.UTC)
    assert kwargs["day"] == datetime.date(2026, 7, 28)
    assert kwargs["id"] == uuid.UUID("0b9b5a6e-0f7c-4f5d-9c79-1d1f0b4c2a11")


def test_nested_types_are_defs_that_resolve():
    def draw(at: Point, box: Box, opts: Options, many: list[Point] = []) -> None:  # noqa: B006
        pass

    sig = tool_signature(draw)
    schema = sig.input_schema
    assert schema["properties"]["at"] == {"$ref": "#/$defs/Point"}
    assert set(schema["$defs"]) == {"Point", "Box", "Options"}
    assert schema["$defs"]["Point"]["description"] == "A point on the plane."
    validator = check_schema(schema)
    good = {"at": {"x": 1}, "box": {"width": 2}, "opts": {"verbose": True}, "many": [{"x": 3}]}
    validator.validate(good)
    assert not validator.is_valid({**good, "at": {"x": "1"}})

    kwargs = sig.bind(good)
    assert kwargs == {
        "at": Point(1),
        "box": Box(2.0),
        "opts": {"verbose": True},
        "many": [Point(3)],
    }
    with pytest.raises(
        ArgumentError, match=r"^Invalid arguments: 'many\[0\]\.x' expected int, got str$"
    ):
        sig.bind({**good, "many": [{"x": "3"}]})


def test_recursive_type_keeps_its_reference():
    def grow(tree: Tree) -> Tree:
        return tree

    sig = tool_signature(grow)
    validator = check_schema(sig.input_schema)
    validator.validate({"tree": {"value": 1, "children": [{"value": 2}]}})
    assert sig.bind({"tree": {"value": 1, "children": [{"value": 2}]}})["tree"] == Tree(
        1, [Tree(2)]
    )
    out = sig.output_schema
    assert out is not None and out["$ref"] == "#/$defs/Tree"
    jsonschema.Draft202012Validator(out).validate({"value": 1, "children": []})


def test_defaults_are_the_functions_own_objects():
    shared = ["a", "b"]
    marker = object()

    def f(tags: list[str] = shared, thing: Any = marker, n: int = None) -> None:  # type: ignore[assignment]
        pass

    sig = tool_signature(f)
    kwargs = sig.bind({})
    assert kwargs["tags"] is shared
    assert kwargs["thing"] is marker
    assert kwargs["n"] is None
    props = sig.input_schema["properties"]
    assert props["tags"]["default"] == ["a", "b"]
    assert "default" not in props["thing"]  # not JSON, so not advertised
    check_schema(sig.input_schema)


def test_unannotated_parameters_accept_anything():
    def echo(value, other=3):  # type: ignore[no-untyped-def]
        return value

    sig = tool_signature(echo)
    assert sig.input_schema["properties"] == {"value": {}, "other": {"default": 3}}
    assert sig.bind({"value": [1, {"a": None}]}) == {"value": [1, {"a": None}], "other": 3}


# -- the context parameter --------------------------------------------------------------------


def test_context_parameter_is_found_and_excluded():
    async def tool(x: int, ctx: Context) -> str:
        return ""

    sig = tool_signature(tool)
    assert sig.context_param == "ctx"
    assert sig.param_names == ("x",)
    assert "ctx" not in sig.input_schema["properties"]
    assert sig.is_async is True
    assert sig.bind({"x": 1}) == {"x": 1}


FUTURE_MODULE = """
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated
if TYPE_CHECKING:
    import rondo
    from rondo import Context

def plain(context: Context, n: Annotated[int, "how many"] = 1) -> list[int]:
    return [n]

def dotted(x: str, c: rondo.Context | None = None) -> str:
    return x

def quoted(x: "int", c: "Context") -> None:
    return None
"""

OWN_CONTEXT_MODULE = """
from __future__ import annotations
import dataclasses

@dataclasses.dataclass
class Context:  # the user's own class that happens to share the name
    topic: str

def own_context(c: Context) -> None:
    return None
"""


def load_module(directory: Path, name: str, source: str):  # type: ignore[no-untyped-def]
    path = directory / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    finally:
        del sys.modules[name]
    return module


def test_context_written_as_a_string_annotation(tmp_path):  # type: ignore[no-untyped-def]
    module = load_module(tmp_path, "rondo_future_mod", FUTURE_MODULE)
    plain = tool_signature(module.plain)
    assert plain.context_param == "context"
    assert plain.input_schema["properties"]["n"] == {
        "type": "integer",
        "description": "how many",
        "default": 1,
    }
    assert plain.output_schema == {"type": "array", "items": {"type": "integer"}}

    dotted = tool_signature(module.dotted)
    assert dotted.context_param == "c"
    assert dotted.param_names == ("x",)

    quoted = tool_signature(module.quoted)
    assert quoted.context_param == "c"
    assert quoted.bind({"x": 2}) == {"x": 2}


def test_a_user_class_named_context_is_an_ordinary_parameter(tmp_path):  # type: ignore[no-untyped-def]
    module = load_module(tmp_path, "rondo_own_context_mod", OWN_CONTEXT_MODULE)
    sig = tool_signature(module.own_context)
    assert sig.context_param is None
    assert sig.param_names == ("c",)
    assert sig.input_schema["properties"]["c"] == {"$ref": "#/$defs/Context"}
    assert sig.bind({"c": {"topic": "x"}})["c"].topic == "x"


# -- binding ----------------------------------------------------------------------------------


def test_tool_arguments_convert_strictly():
    def f(
        i: int,
        x: float,
        flag: bool = False,
        items: tuple[int, ...] = (),
        s: set[str] = set(),  # noqa: B006
    ) -> None:
        pass

    sig = tool_signature(f)
    kwargs = sig.bind({"i": 1, "x": 1, "items": [1, 2], "s": ["a", "a"]})
    assert kwargs == {"i": 1, "x": 1.0, "flag": False, "items": (1, 2), "s": {"a"}}
    assert type(kwargs["x"]) is float
    for bad, message in [
        ({"i": "1", "x": 1}, "Invalid arguments: 'i' expected int, got str"),
        ({"i": 1.5, "x": 1}, "Invalid arguments: 'i' expected int, got float"),
        ({"i": True, "x": 1}, "Invalid arguments: 'i' expected int, got bool"),
        ({"i": 1, "x": "1.0"}, "Invalid arguments: 'x' expected float, got str"),
        ({"i": 1, "x": 1, "flag": "true"}, "Invalid arguments: 'flag' expected bool, got str"),
        ({"x": 1}, "Invalid arguments: missing required argument 'i'"),
        ({"i": 1, "x": 1, "j": 2}, "Invalid arguments: unknown argument 'j'"),
        (
            {"i": 1, "x": 1, "items": [1, "2"]},
            "Invalid arguments: 'items[1]' expected int, got str",
        ),
    ]:
        with pytest.raises(ArgumentError, match=f"^{re.escape(message)}$"):
            sig.bind(bad)


def test_error_messages_for_nested_and_constrained_values():
    def f(
        at: Point,
        n: Annotated[int, msgspec.Meta(ge=0)] = 0,
        color: Color = Color.RED,
        scores: dict[str, int] | None = None,
    ) -> None:
        pass

    sig = tool_signature(f)
    cases = [
        ({"at": {}}, "Invalid arguments: missing required field 'x' in 'at'"),
        ({"at": {"x": 1}, "n": -1}, "Invalid arguments: 'n' expected int >= 0"),
        (
            {"at": {"x": 1}, "color": "blue"},
            "Invalid arguments: 'color': invalid enum value 'blue'",
        ),
        ({"at": 3}, "Invalid arguments: 'at' expected object, got int"),
        (
            {"at": {"x": 1}, "scores": {"a": "x"}},
            "Invalid arguments: 'scores[...]' expected int, got str",
        ),
    ]
    for bad, message in cases:
        with pytest.raises(ArgumentError, match=f"^{re.escape(message)}$"):
            sig.bind(bad)


def test_arguments_must_be_an_object():
    def f(a: int = 0) -> None:
        pass

    sig = tool_signature(f)
    for bad, kind in [([1], "array"), ("x", "str"), (3, "int")]:
        with pytest.raises(ArgumentError, match=f"arguments must be an object, got {kind}"):
            sig.bind(bad)  # type: ignore[arg-type]


def test_any_mapping_is_accepted():
    from types import MappingProxyType

    def f(a: int) -> None:
        pass

    assert tool_signature(f).bind(MappingProxyType({"a": 1})) == {"a": 1}


def test_var_keyword_passes_extras_through():
    def loose(a: int, **rest: Any) -> None:
        pass

    def typed(a: int, **rest: int) -> None:
        pass

    sig = tool_signature(loose)
    assert "additionalProperties" not in sig.input_schema
    assert sig.bind({"a": 1, "b": "x", "c": [1]}) == {"a": 1, "b": "x", "c": [1]}
    check_schema(sig.input_schema)

    sig = tool_signature(typed)
    assert sig.input_schema["additionalProperties"] == {"type": "integer"}
    assert sig.bind({"a": 1, "b": 2}) == {"a": 1, "b": 2}
    with pytest.raises(ArgumentError, match=r"^Invalid arguments: 'b' expected int, got str$"):
        sig.bind({"a": 1, "b": "2"})


def test_positional_only_and_unsupported_types_fail_at_decoration():
    def positional(a: int, /) -> None:
        pass

    class Opaque:
        pass

    def opaque(a: int, thing: Opaque) -> None:
        pass

    with pytest.raises(ValueError, match="positional-only parameter 'a'"):
        tool_signature(positional)
    with pytest.raises(ValueError, match="parameter 'thing' has an unsupported type"):
        tool_signature(opaque)


def test_async_detection_covers_callable_objects():
    class Handler:
        async def __call__(self, x: int) -> str:
            return ""

    sig = tool_signature(Handler())
    assert sig.is_async is True
    assert sig.param_names == ("x",)


# -- pydantic ---------------------------------------------------------------------------------


def test_pydantic_model_parameter_and_return():
    def register(person: Person, ctx: Context) -> Person:
        return person

    sig = tool_signature(register)
    schema = sig.input_schema
    assert schema["properties"]["person"]["title"] == "Person"
    # pydantic's own $defs are hoisted to the root so its #/$defs/ references resolve.
    assert "Address" in schema["$defs"]
    validator = check_schema(schema)
    validator.validate({"person": {"name": "Ada", "address": {"street": "Main"}}})

    kwargs = sig.bind({"person": {"name": "Ada", "address": {"street": "Main"}}})
    assert kwargs["person"] == Person(name="Ada", address=Address(street="Main"))
    with pytest.raises(ArgumentError, match=re.escape("Invalid arguments: 'person': invalid Person (name: ")):
        sig.bind({"person": {"name": 1}})

    assert sig.output_schema is not None and sig.output_schema["title"] == "Person"
    assert sig.structure_output(Person(name="Ada")) == {"name": "Ada", "age": 0, "address": None}


# -- explicit schemas -------------------------------------------------------------------------

CONFORMANCE_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def test_explicit_input_schema_is_emitted_verbatim():
    def echo(**arguments: Any) -> str:
        return json.dumps(arguments)

    expected = json.loads(json.dumps(CONFORMANCE_SCHEMA))
    sig = tool_signature(echo, input_schema=CONFORMANCE_SCHEMA)
    assert sig.input_schema == expected
    assert json.dumps(sig.input_schema) == json.dumps(expected)  # key order too
    args = {"name": "Ada", "email": "a@example.com", "anything": 1}
    assert sig.bind(args) == args
    assert sig.bind(args) is not args
    check_schema(sig.input_schema)


def test_explicit_input_schema_passes_only_parameters():
    def f(a: int, b: int = 2, ctx: Context | None = None) -> None:
        pass

    sig = tool_signature(f, input_schema={"type": "object"})
    assert sig.bind({"a": "not checked", "z": 1}) == {"a": "not checked"}
    assert sig.context_param == "ctx"
    with pytest.raises(ArgumentError, match="missing required argument 'a'"):
        sig.bind({"b": 1})
    with pytest.raises(ArgumentError, match="must be an object"):
        sig.bind([])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="type 'object'"):
        tool_signature(f, input_schema={"type": "array"})


def test_explicit_output_schema_overrides():
    def f() -> str:
        return "x"

    sig = tool_signature(f, output_schema={"type": "object", "properties": {"v": {}}})
    assert sig.output_schema == {"type": "object", "properties": {"v": {}}}


# -- output schemas ---------------------------------------------------------------------------


def _returns(annotation: Any) -> dict[str, Any] | None:
    def f() -> None:
        pass

    f.__annotations__ = {"return": annotation}
    return tool_signature(f).output_schema


@pytest.mark.parametrize(
    "annotation",
    [
        str,
        None,
        type(None),
        Any,
        dict,
        list,
        bytes,
        str | None,
        TextContent,
        ContentBlock,
        list[ContentBlock],
        ToolResult,
        Point | str,
    ],
)
def test_unstructured_returns_have_no_output_schema(annotation):  # type: ignore[no-untyped-def]
    assert _returns(annotation) is None


def test_missing_return_annotation_has_no_output_schema():
    def f():  # type: ignore[no-untyped-def]
        return 1

    assert tool_signature(f).output_schema is None


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (dict[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
        (
            Point,
            {
                "title": "Point",
                "description": "A point on the plane.",
                "type": "object",
                "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
                "required": ["x"],
            },
        ),
    ],
)
def test_structured_returns_have_an_output_schema(annotation, expected):  # type: ignore[no-untyped-def]
    assert _returns(annotation) == expected


def test_output_schema_of_a_list_of_structs_keeps_defs():
    schema = _returns(list[Point])
    assert schema is not None
    assert schema["items"] == {"$ref": "#/$defs/Point"}
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate([{"x": 1, "y": 2}])


def test_structure_output_makes_json_builtins():
    def f() -> Point:
        return Point(1)

    sig = tool_signature(f)
    assert sig.structure_output(Point(1, 2)) == {"x": 1, "y": 2}
    assert sig.structure_output({"when": datetime.date(2026, 7, 28)}) == {"when": "2026-07-28"}


# -- prompts and templates --------------------------------------------------------------------


def test_prompt_arguments_and_lenient_conversion():
    def review(
        code: Annotated[str, "The code to review"],
        lines: int,
        strict: bool = False,
        ratio: float = 0.5,
        ctx: Context | None = None,
    ) -> str:
        return ""

    sig, arguments = prompt_signature(review)
    assert arguments == [
        {"name": "code", "description": "The code to review", "required": True},
        {"name": "lines", "required": True},
        {"name": "strict", "required": False},
        {"name": "ratio", "required": False},
    ]
    for argument in arguments:
        official("PromptArgument").validate(argument)
    assert sig.context_param == "ctx"
    assert sig.output_schema is None
    assert sig.bind({"code": "x", "lines": "5", "strict": "true", "ratio": "2.5"}) == {
        "code": "x",
        "lines": 5,
        "strict": True,
        "ratio": 2.5,
    }
    with pytest.raises(ArgumentError, match="'lines' expected int, got str"):
        sig.bind({"code": "x", "lines": "five"})


def test_template_parameters_must_match_the_variables():
    def note(folder: str, id: int, ctx: Context) -> str:
        return ""

    sig = template_signature(note, ["folder", "id"])
    assert sig.bind({"folder": "a", "id": "42"}) == {"folder": "a", "id": 42}
    assert sig.context_param == "ctx"
    with pytest.raises(ValueError, match="no matching parameter"):
        template_signature(note, ["folder", "id", "extra"])
    with pytest.raises(ValueError, match="not variables of the URI template"):
        template_signature(note, ["folder"])

    def static() -> str:
        return ""

    assert template_signature(static, ()).bind({}) == {}


# -- properties -------------------------------------------------------------------------------


class Shade(enum.Enum):
    LIGHT = "light"
    DARK = "dark"


def _wide(
    i: int,
    f: float,
    s: str,
    b: bool,
    maybe: int | None = None,
    ints: list[int] = [],  # noqa: B006
    mode: Literal["a", "b"] = "a",
    shade: Shade = Shade.LIGHT,
    table: dict[str, bool] = {},  # noqa: B006
) -> None:
    pass


WIDE = tool_signature(_wide)
WIDE_VALIDATOR = jsonschema.Draft202012Validator(WIDE.input_schema)

ints = st.integers(min_value=-(2**63), max_value=2**63 - 1)
floats = st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: not x.is_integer())
json_scalars = st.none() | st.booleans() | ints | floats | st.text(max_size=5)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
valid_wide = st.fixed_dictionaries(
    {"i": ints, "f": ints | floats, "s": st.text(), "b": st.booleans()},
    optional={
        "maybe": st.none() | ints,
        "ints": st.lists(ints, max_size=4),
        "mode": st.sampled_from(["a", "b"]),
        "shade": st.sampled_from(["light", "dark"]),
        "table": st.dictionaries(st.text(max_size=4), st.booleans(), max_size=3),
    },
)


@settings(max_examples=300)
@given(valid_wide)
def test_bind_round_trips_valid_arguments(arguments):  # type: ignore[no-untyped-def]
    WIDE_VALIDATOR.validate(arguments)
    kwargs = WIDE.bind(arguments)
    assert set(kwargs) == set(WIDE.param_names)
    for key, value in arguments.items():
        got = kwargs[key]
        if key == "shade":
            assert got is Shade(value)
        elif key == "f":
            assert type(got) is float and got == float(value)
        else:
            assert got == value and type(got) is type(value)


@settings(max_examples=300)
@given(
    valid_wide, st.sampled_from(["i", "f", "s", "b", "maybe", "ints", "mode", "shade"]), json_values
)
def test_bind_agrees_with_the_schema_on_one_changed_value(arguments, key, value):  # type: ignore[no-untyped-def]
    changed = {**arguments, key: value}
    valid_by_schema = WIDE_VALIDATOR.is_valid(changed)
    try:
        WIDE.bind(changed)
    except ArgumentError as exc:
        assert str(exc).startswith("Invalid arguments: ")
        assert not valid_by_schema, f"bind rejected schema-valid {changed!r}: {exc}"
    else:
        assert valid_by_schema, f"bind accepted schema-invalid {changed!r}"


@settings(max_examples=300)
@given(
    st.dictionaries(
        st.sampled_from(["i", "f", "s", "b", "maybe", "zz"]) | st.text(max_size=3),
        json_values,
        max_size=6,
    )
    | json_values
)
def test_bind_raises_only_argument_error(arguments):  # type: ignore[no-untyped-def]
    try:
        kwargs = WIDE.bind(arguments)
    except ArgumentError as exc:
        message = str(exc)
        assert message.startswith("Invalid arguments: ") and "\n" not in message
    else:
        assert isinstance(arguments, dict) and set(kwargs) == set(WIDE.param_names)


def test_extra_json_schema_keywords_reach_the_property():
    def regional(
        region: Annotated[str, msgspec.Meta(extra_json_schema={"x-mcp-header": "Region"})],
    ) -> str:
        return region

    schema = tool_signature(regional).input_schema
    assert schema["properties"]["region"] == {"type": "string", "x-mcp-header": "Region"}


def test_pydantic_is_not_imported_unless_a_model_is_used():
    code = (
        "import sys\n"
        "from rondo.server.schema import tool_signature\n"
        "from rondo.core.results import tool_result\n"
        "def f(a: int, b: list[str] | None = None) -> dict[str, int]:\n"
        "    return {'a': a}\n"
        "sig = tool_signature(f)\n"
        "tool_result(f(**sig.bind({'a': 1})), sig)\n"
        "assert 'pydantic' not in sys.modules, 'pydantic was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# -- `object` spells what `Any` spells in a return annotation (first-hour friction 7) ----------

@pytest.mark.parametrize(("spelled", "same_as"), [
    (dict[str, object], dict[str, Any]),
    (list[object], list[Any]),
    (dict[str, list[object]], dict[str, list[Any]]),
    (tuple[int, object], tuple[int, Any]),
])
def test_object_and_any_give_the_same_output_schema(spelled: Any, same_as: Any) -> None:
    def with_object() -> None: ...

    def with_any() -> None: ...

    with_object.__annotations__["return"] = spelled
    with_any.__annotations__["return"] = same_as
    got = tool_signature(with_object).output_schema
    assert got is not None and got == tool_signature(with_any).output_schema


def test_dict_of_object_return_is_structured_output_end_to_end() -> None:
    import asyncio

    import rondo
    from rondo.client import Client

    server = rondo.Server("spelling", state=None)

    @server.tool
    def stats() -> dict[str, object]:
        """Counts."""
        return {"hits": 3, "tags": ["a"]}

    async def go() -> Any:
        async with Client(server) as client:
            return await client.call_tool("stats")

    assert asyncio.run(go()).structured_content == {"hits": 3, "tags": ["a"]}
