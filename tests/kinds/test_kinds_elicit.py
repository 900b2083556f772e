"""Form and URL elicitation: builders, the restricted schema subset, shorthand, answers."""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import json
import re
from typing import Annotated, Literal, NotRequired, Required, TypedDict

import msgspec
import pytest

import rondo.elicit
from rondo.kinds import ElicitResult, kind_for
from rondo.kinds.elicit import FORM, URL
from rondo.kinds.formschema import is_date, is_date_time, is_email, is_uri
from tests.helpers.wire_schema import assert_definition as assert_official

EVERY_PRIMITIVE = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 1, "maxLength": 20},
        "email": {"type": "string", "format": "email", "default": "a@b.org"},
        "site": {"type": "string", "format": "uri"},
        "born": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "date-time"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
        "ratio": {"type": "number", "minimum": 0.5, "maximum": 2.5},
        "ok": {"type": "boolean", "description": "Agree?", "default": False},
        "color": {"type": "string", "enum": ["red", "green"], "default": "red"},
        "size": {
            "type": "string",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
        },
        "tags": {
            "type": "array",
            "items": {"type": "string", "enum": ["a", "b", "c"]},
            "minItems": 1,
            "maxItems": 2,
            "default": ["a"],
        },
        "flavours": {
            "type": "array",
            "items": {"anyOf": [{"const": "x", "title": "Ex"}, {"const": "y", "title": "Why"}]},
        },
        "legacy": {"type": "string", "enum": ["p", "q"], "enumNames": ["Pea", "Queue"]},
    },
    "required": ["name", "age"],
}


# -- building form requests ----------------------------------------------------------------------


def test_form_builds_a_plain_request_the_official_schema_accepts():
    request = rondo.elicit.form("Tell me about you", EVERY_PRIMITIVE)
    assert request == {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Tell me about you",
            "requestedSchema": EVERY_PRIMITIVE,
        },
    }
    assert_official("ElicitRequest", request)
    assert_official("ElicitRequestFormParams", request["params"])
    json.dumps(request)  # JSON-ready


def test_form_copies_the_schema_so_later_edits_do_not_leak_in():
    schema = copy.deepcopy(EVERY_PRIMITIVE)
    request = rondo.elicit.form("m", schema)
    schema["properties"]["name"]["pattern"] = "x"
    assert "pattern" not in request["params"]["requestedSchema"]["properties"]["name"]


def _with(prop: dict) -> dict:
    return {"type": "object", "properties": {"f": prop}}


BAD_SCHEMAS = [
    (_with({"type": "string", "pattern": "^a"}), "requestedSchema.properties.f.pattern"),
    (_with({"type": "object", "properties": {}}), "requestedSchema.properties.f.type"),
    (_with({"type": "null"}), "requestedSchema.properties.f.type"),
    (_with({"type": ["string", "null"]}), "requestedSchema.properties.f.type"),
    (_with({"title": "no type"}), "requestedSchema.properties.f.type"),
    (
        _with({"type": "array", "items": {"type": "object"}}),
        "requestedSchema.properties.f.items.type",
    ),
    (
        _with({"type": "array", "items": {"type": "string"}}),
        "requestedSchema.properties.f.items.enum",
    ),
    (_with({"type": "array"}), "requestedSchema.properties.f.items"),
    (
        _with(
            {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}], "type": "string"}}
        ),
        "requestedSchema.properties.f.items.type",
    ),
    (_with({"type": "array", "items": {"anyOf": []}}), "requestedSchema.properties.f.items.anyOf"),
    (_with({"type": "string", "enum": [1, 2]}), "requestedSchema.properties.f.enum[0]"),
    (_with({"type": "string", "enum": []}), "requestedSchema.properties.f.enum"),
    (_with({"type": "string", "enum": ["a", "a"]}), "requestedSchema.properties.f.enum[1]"),
    (
        _with({"type": "string", "enum": ["a"], "format": "email"}),
        "requestedSchema.properties.f.format",
    ),
    (_with({"type": "string", "enum": ["a"], "oneOf": []}), "requestedSchema.properties.f.oneOf"),
    (
        _with({"type": "string", "enum": ["a", "b"], "enumNames": ["A"]}),
        "requestedSchema.properties.f.enumNames",
    ),
    (
        _with({"type": "string", "oneOf": [{"const": "a"}]}),
        "requestedSchema.properties.f.oneOf[0].title",
    ),
    (
        _with({"type": "string", "oneOf": [{"const": "a", "title": "A", "x": 1}]}),
        "requestedSchema.properties.f.oneOf[0].x",
    ),
    (_with({"type": "string", "minLength": -1}), "requestedSchema.properties.f.minLength"),
    (_with({"type": "string", "minLength": 1.5}), "requestedSchema.properties.f.minLength"),
    (
        _with({"type": "string", "minLength": 5, "maxLength": 2}),
        "requestedSchema.properties.f.maxLength",
    ),
    (_with({"type": "string", "format": "ipv4"}), "requestedSchema.properties.f.format"),
    (_with({"type": "string", "title": 3}), "requestedSchema.properties.f.title"),
    (_with({"type": "string", "default": 3}), "requestedSchema.properties.f.default"),
    (
        _with({"type": "string", "minLength": 3, "default": "ab"}),
        "requestedSchema.properties.f.default",
    ),
    (
        _with({"type": "string", "format": "date", "default": "2024-02-30"}),
        "requestedSchema.properties.f.default",
    ),
    (
        _with({"type": "string", "enum": ["a"], "default": "b"}),
        "requestedSchema.properties.f.default",
    ),
    (_with({"type": "integer", "minimum": True}), "requestedSchema.properties.f.minimum"),
    (
        _with({"type": "integer", "minimum": 3, "maximum": 1}),
        "requestedSchema.properties.f.maximum",
    ),
    (_with({"type": "integer", "default": 1.5}), "requestedSchema.properties.f.default"),
    (
        _with({"type": "number", "exclusiveMinimum": 0}),
        "requestedSchema.properties.f.exclusiveMinimum",
    ),
    (_with({"type": "boolean", "default": "yes"}), "requestedSchema.properties.f.default"),
    (_with({"type": "boolean", "enum": [True]}), "requestedSchema.properties.f.enum"),
    (
        _with(
            {
                "type": "array",
                "items": {"type": "string", "enum": ["a"]},
                "minItems": 2,
                "maxItems": 1,
            }
        ),
        "requestedSchema.properties.f.maxItems",
    ),
    (
        _with({"type": "array", "items": {"type": "string", "enum": ["a"]}, "uniqueItems": True}),
        "requestedSchema.properties.f.uniqueItems",
    ),
    (
        _with({"type": "array", "items": {"type": "string", "enum": ["a"]}, "default": ["z"]}),
        "requestedSchema.properties.f.default[0]",
    ),
    (_with("string"), "requestedSchema.properties.f"),
    (
        {"type": "object", "properties": {}, "additionalProperties": False},
        "requestedSchema.additionalProperties",
    ),
    ({"type": "array", "properties": {}}, "requestedSchema.type"),
    ({"properties": {}}, "requestedSchema.type"),
    ({"type": "object"}, "requestedSchema.properties"),
    ({"type": "object", "properties": []}, "requestedSchema.properties"),
    ({"type": "object", "properties": {"": {"type": "string"}}}, "requestedSchema.properties"),
    ({"type": "object", "properties": {}, "required": ["x"]}, "requestedSchema.required[0]"),
    (
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": "a"},
        "requestedSchema.required",
    ),
    (
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "a"]},
        "requestedSchema.required[1]",
    ),
    ({"$schema": 7, "type": "object", "properties": {}}, "requestedSchema.$schema"),
    ({"type": "object", "properties": {}, "$defs": {}}, "requestedSchema.$defs"),
]


@pytest.mark.parametrize(("schema", "path"), BAD_SCHEMAS)
def test_form_rejects_anything_outside_the_subset_naming_the_path(schema, path):
    with pytest.raises(ValueError, match="^" + re.escape(path + ":")) as info:
        rondo.elicit.form("m", schema)
    assert str(info.value).startswith(path + ":"), str(info.value)


@pytest.mark.parametrize("message", [None, 3, ""])
def test_form_needs_a_message(message):
    with pytest.raises(ValueError, match="^message:"):
        rondo.elicit.form(message, {"type": "object", "properties": {}})


@pytest.mark.parametrize("schema", [None, "schema", ["type"], 3, int])
def test_form_needs_a_schema_object_or_a_schema_class(schema):
    with pytest.raises(ValueError, match="^requestedSchema"):
        rondo.elicit.form("m", schema)


def test_validate_request_rejects_unknown_params_and_wrong_modes():
    good = rondo.elicit.form("m", {"type": "object", "properties": {}})
    FORM.validate_request(good)
    without_mode = copy.deepcopy(good)
    del without_mode["params"]["mode"]
    FORM.validate_request(without_mode)  # missing mode means form
    extra = copy.deepcopy(good)
    extra["params"]["requestedschema"] = {}
    with pytest.raises(ValueError, match=r"^requestedschema:"):
        FORM.validate_request(extra)
    with pytest.raises(ValueError, match=r"^method:"):
        FORM.validate_request({"method": "sampling/createMessage", "params": good["params"]})
    with pytest.raises(ValueError, match=r"^params:"):
        FORM.validate_request({"method": "elicitation/create"})
    with pytest.raises(ValueError, match=r"^request.id:"):
        FORM.validate_request({**good, "id": 1})


# -- the Python shorthand ------------------------------------------------------------------------


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Profile:
    name: Annotated[str, "Your name"]
    age: Annotated[int, msgspec.Meta(ge=0, le=150, title="Age")]
    email: Annotated[str, msgspec.Meta(extra_json_schema={"format": "email"})]
    height: float
    subscribe: bool = False
    size: Literal["s", "m", "l"] = "m"
    tags: list[Literal["a", "b", "c"]] = dataclasses.field(default_factory=lambda: ["a"])
    colour: Colour = Colour.RED
    nickname: Annotated[str, msgspec.Meta(min_length=2, max_length=8)] | None = None
    picks: Annotated[list[Colour], msgspec.Meta(min_length=1)] = dataclasses.field(
        default_factory=lambda: [Colour.BLUE]
    )


def test_a_dataclass_becomes_the_schema():
    request = rondo.elicit.form("About you", Profile)
    schema = request["params"]["requestedSchema"]
    assert schema == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Your name"},
            "age": {"type": "integer", "minimum": 0, "maximum": 150, "title": "Age"},
            "email": {"type": "string", "format": "email"},
            "height": {"type": "number"},
            "subscribe": {"type": "boolean", "default": False},
            "size": {"type": "string", "enum": ["s", "m", "l"], "default": "m"},
            "tags": {
                "type": "array",
                "items": {"type": "string", "enum": ["a", "b", "c"]},
                "default": ["a"],
            },
            "colour": {"type": "string", "enum": ["red", "blue"], "default": "red"},
            "nickname": {"type": "string", "minLength": 2, "maxLength": 8},
            "picks": {
                "type": "array",
                "items": {"type": "string", "enum": ["red", "blue"]},
                "minItems": 1,
                "default": ["blue"],
            },
        },
        "required": ["name", "age", "email", "height"],
    }
    assert_official("ElicitRequestFormParams", request["params"])


def test_content_converts_back_into_the_class():
    request = rondo.elicit.form("About you", Profile)
    answer = {
        "action": "accept",
        "content": {
            "name": "Ada",
            "age": 36,
            "email": "ada@example.org",
            "height": 1.7,
            "colour": "blue",
            "tags": ["b", "c"],
        },
    }
    result = FORM.read_answer(request, answer)
    profile = result.content_as(Profile)
    assert profile == Profile(
        name="Ada", age=36, email="ada@example.org", height=1.7, colour=Colour.BLUE, tags=["b", "c"]
    )
    with pytest.raises(ValueError, match=r"elicitation was not accepted \(action='decline'\)"):
        ElicitResult("decline").content_as(Profile)


class Signup(TypedDict):
    user: str
    plan: Literal["free", "pro"]
    seats: NotRequired[int]


class Partial(TypedDict, total=False):
    note: str


class Prefs(msgspec.Struct):
    theme: Literal["dark", "light"]
    volume: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.5


def test_typeddicts_and_structs_become_schemas():
    signup = rondo.elicit.form("m", Signup)["params"]["requestedSchema"]
    assert signup == {
        "type": "object",
        "properties": {
            "user": {"type": "string"},
            "plan": {"type": "string", "enum": ["free", "pro"]},
            "seats": {"type": "integer"},
        },
        "required": ["user", "plan"],
    }
    partial = rondo.elicit.form("m", Partial)["params"]["requestedSchema"]
    assert partial == {"type": "object", "properties": {"note": {"type": "string"}}}
    prefs = rondo.elicit.form("m", Prefs)["params"]["requestedSchema"]
    assert prefs == {
        "type": "object",
        "properties": {
            "theme": {"type": "string", "enum": ["dark", "light"]},
            "volume": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5},
        },
        "required": ["theme"],
    }


@dataclasses.dataclass
class Inner:
    x: int


@dataclasses.dataclass
class Nested:
    inner: Inner


@dataclasses.dataclass
class FreeList:
    items: list[str]


@dataclasses.dataclass
class Mapping_:
    data: dict[str, int]


@dataclasses.dataclass
class Either:
    value: int | str


@dataclasses.dataclass
class Exclusive:
    value: Annotated[int, msgspec.Meta(gt=0)]


@dataclasses.dataclass
class Patterned:
    value: Annotated[str, msgspec.Meta(extra_json_schema={"pattern": "^a"})]


@dataclasses.dataclass
class Numbers:
    value: Literal[1, 2]


@dataclasses.dataclass
class BadDefault:
    value: Literal["a", "b"] = "c"  # type: ignore[assignment]


@pytest.mark.parametrize(
    ("cls", "path"),
    [
        (Nested, "requestedSchema.properties.inner"),
        (FreeList, "requestedSchema.properties.items"),
        (Mapping_, "requestedSchema.properties.data"),
        (Either, "requestedSchema.properties.value"),
        (Exclusive, "requestedSchema.properties.value"),
        (Patterned, "requestedSchema.properties.value.pattern"),
        (Numbers, "requestedSchema.properties.value.enum[0]"),
        (BadDefault, "requestedSchema.properties.value.default"),
    ],
)
def test_shorthand_refuses_what_a_form_cannot_hold(cls, path):
    with pytest.raises(ValueError, match="^" + re.escape(path + ":")) as info:
        rondo.elicit.form("m", cls)
    assert str(info.value).startswith(path + ":"), str(info.value)


# -- URL requests ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com",
        "https://example.com/oauth/start?state=abc#frag",
        "http://127.0.0.1:8080/connect",
        "HTTPS://Example.COM/x%20y",
        "https://[::1]:8443/",
    ],
)
def test_url_accepts_http_and_https_navigation(url):
    request = rondo.elicit.url("Connect your account", url)
    assert request == {
        "method": "elicitation/create",
        "params": {"mode": "url", "message": "Connect your account", "url": url},
    }
    assert_official("ElicitRequest", request)
    assert_official("ElicitRequestURLParams", request["params"])
    assert kind_for(request) is URL


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://example.com/file", "http or https"),
        ("javascript:alert(1)", "http or https"),
        ("file:///etc/passwd", "http or https"),
        ("mailto:a@example.com", "http or https"),
        ("https:///path-only", "host"),
        ("https://user:secret@example.com/", "user info"),
        ("https://user@example.com/", "user info"),
        ("https://example.com/a b", "valid URI"),
        ("https://exämple.com/", "ASCII"),
        ("https://example.com:99999/", "port"),
        ("https://example.com:abc/", "port"),
        ("/relative/path", "valid URI"),
        ("https://example.com/%zz", "valid URI"),
        ("", "empty"),
        (None, "string"),
        (42, "string"),
    ],
)
def test_url_refuses_anything_but_plain_http_navigation(url, reason):
    with pytest.raises(ValueError, match=r"^url: .*" + reason):
        rondo.elicit.url("m", url)


def test_url_needs_a_message():
    with pytest.raises(ValueError, match="^message:"):
        rondo.elicit.url("", "https://example.com")


# -- reading answers -------------------------------------------------------------------------------

FULL_ANSWER = {
    "name": "Ada",
    "email": "ada@example.org",
    "site": "https://ada.example.org/",
    "born": "1815-12-10",
    "at": "2026-07-28T12:30:00Z",
    "age": 36,
    "ratio": 1,
    "ok": True,
    "color": "green",
    "size": "l",
    "tags": ["a", "c"],
    "flavours": [],
    "legacy": "q",
}


def form_request(schema: dict = EVERY_PRIMITIVE) -> dict:
    return rondo.elicit.form("m", schema)


def test_an_accepted_form_answer_becomes_an_elicit_result():
    request = form_request()
    answer = {"action": "accept", "content": FULL_ANSWER}
    result = FORM.read_answer(request, answer)
    assert result == ElicitResult("accept", FULL_ANSWER)
    assert result.accepted and not result.declined and not result.cancelled
    assert result.to_dict() == answer
    assert FORM.read_answer(request, result.to_dict()) == result  # round-trips through state
    assert_official("ElicitResult", result.to_dict())
    with pytest.raises(AttributeError, match="^immutable type: 'ElicitResult'$"):
        result.action = "decline"  # type: ignore[misc]


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_carry_no_content(action):
    result = FORM.read_answer(form_request(), {"action": action, "content": {"name": 3}})
    assert result == ElicitResult(action, None)
    assert result.declined == (action == "decline")
    assert result.cancelled == (action == "cancel")
    assert result.to_dict() == {"action": action}


def test_unknown_fields_are_dropped_not_passed_on():
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    result = FORM.read_answer(
        form_request(schema), {"action": "accept", "content": {"a": "x", "admin": True}}
    )
    assert result.content == {"a": "x"}


def test_accept_without_content_is_empty_unless_fields_are_required():
    optional = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert FORM.read_answer(form_request(optional), {"action": "accept"}).content == {}
    assert (
        FORM.read_answer(form_request(optional), {"action": "accept", "content": None}).content
        == {}
    )
    required = {**optional, "required": ["a"]}
    with pytest.raises(ValueError, match=r"^content\.a: is required"):
        FORM.read_answer(form_request(required), {"action": "accept"})


def _answer(**changes):
    content = {**FULL_ANSWER, **changes}
    return {"action": "accept", "content": {k: v for k, v in content.items() if v is not ...}}


@pytest.mark.parametrize(
    ("answer", "path"),
    [
        (_answer(name=...), "content.name"),
        (_answer(name=""), "content.name"),
        (_answer(name="x" * 21), "content.name"),
        (_answer(name=None), "content.name"),
        (_answer(name=5), "content.name"),
        (_answer(email="not-an-email"), "content.email"),
        (_answer(site="no scheme"), "content.site"),
        (_answer(born="1815-13-10"), "content.born"),
        (_answer(at="2026-07-28 12:30:00"), "content.at"),
        (_answer(age=36.5), "content.age"),
        (_answer(age="36"), "content.age"),
        (_answer(age=True), "content.age"),
        (_answer(age=-1), "content.age"),
        (_answer(age=151), "content.age"),
        (_answer(ratio=0.4), "content.ratio"),
        (_answer(ratio=float("nan")), "content.ratio"),
        (_answer(ok="true"), "content.ok"),
        (_answer(ok=1), "content.ok"),
        (_answer(color="blue"), "content.color"),
        (_answer(size="Small"), "content.size"),
        (_answer(tags=[]), "content.tags"),
        (_answer(tags=["a", "b", "c"]), "content.tags"),
        (_answer(tags=["a", "a"]), "content.tags[1]"),
        (_answer(tags=["z"]), "content.tags[0]"),
        (_answer(tags="a"), "content.tags"),
        (_answer(flavours=["Ex"]), "content.flavours[0]"),
        (_answer(legacy="Pea"), "content.legacy"),
        ({"action": "accept", "content": ["Ada"]}, "content"),
        ({"action": "accept", "content": "Ada"}, "content"),
        ({"action": "yes"}, "action"),
        ({"content": {}}, "action"),
        ({"action": "accept", "_meta": "x", "content": FULL_ANSWER}, "_meta"),
    ],
)
def test_malformed_form_answers_are_rejected_naming_the_field(answer, path):
    with pytest.raises(ValueError, match="^" + re.escape(path + ":")) as info:
        FORM.read_answer(form_request(), answer)
    assert str(info.value).startswith(path + ":"), str(info.value)


@pytest.mark.parametrize("answer", [None, "accept", 1, 2.5, True, ["accept"], ("accept",)])
def test_non_object_answers_are_rejected(answer):
    with pytest.raises(ValueError, match="answer must be an object"):
        FORM.read_answer(form_request(), answer)
    with pytest.raises(ValueError, match="answer must be an object"):
        URL.read_answer(rondo.elicit.url("m", "https://example.com"), answer)


def test_numbers_and_integers():
    schema = {"type": "object", "properties": {"n": {"type": "number"}, "i": {"type": "integer"}}}
    read = functools.partial(FORM.read_answer, form_request(schema))
    assert read({"action": "accept", "content": {"n": 2, "i": 2}}).content == {"n": 2, "i": 2}
    assert read({"action": "accept", "content": {"n": 2.5}}).content == {"n": 2.5}
    integral = read({"action": "accept", "content": {"i": 3.0}}).content
    assert integral == {"i": 3} and type(integral["i"]) is int
    with pytest.raises(ValueError, match=r"^content\.i: must be an integer"):
        read({"action": "accept", "content": {"i": 3.5}})
    with pytest.raises(ValueError, match=r"^content\.n"):
        read({"action": "accept", "content": {"n": float("inf")}})


def test_url_answers_are_consent_only():
    request = rondo.elicit.url("m", "https://example.com/connect")
    result = URL.read_answer(request, {"action": "accept", "content": {"token": "leak"}})
    assert result == ElicitResult("accept", None)
    assert result.to_dict() == {"action": "accept"}
    assert_official("ElicitResult", result.to_dict())
    with pytest.raises(ValueError, match="^action:"):
        URL.read_answer(request, {"action": "done"})


def test_read_answer_rechecks_a_request_it_did_not_build():
    bogus = {
        "method": "elicitation/create",
        "params": {"message": "m", "requestedSchema": {"type": "object"}},
    }
    with pytest.raises(ValueError, match=r"^requestedSchema\.properties"):
        FORM.read_answer(bogus, {"action": "accept", "content": {}})
    with pytest.raises(ValueError, match=r"^requestedSchema"):
        FORM.read_answer({"method": "elicitation/create", "params": 3}, {"action": "accept"})


# -- capabilities ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("caps", "form_ok", "url_ok"),
    [
        ({"elicitation": {}}, True, False),
        ({"elicitation": {"form": {}}}, True, False),
        ({"elicitation": {"url": {}}}, False, True),
        ({"elicitation": {"form": {}, "url": {}}}, True, True),
        ({"elicitation": {"form": {}, "url": {}}, "sampling": {}}, True, True),
        ({}, False, False),
        ({"sampling": {}}, False, False),
        ({"elicitation": None}, False, False),
        ({"elicitation": True}, False, False),
        ({"elicitation": {"url": True}}, False, False),
        ({"elicitation": {"form": None, "url": {}}}, False, True),
    ],
)
def test_elicitation_capabilities(caps, form_ok, url_ok):
    form = form_request()
    url = rondo.elicit.url("m", "https://example.com")
    assert FORM.is_supported(form, caps) is form_ok
    assert URL.is_supported(url, caps) is url_ok
    assert FORM.required_capability(form) == {"elicitation": {"form": {}}}
    assert URL.required_capability(url) == {"elicitation": {"url": {}}}
    assert FORM.missing_capability(form, caps) == ({} if form_ok else {"elicitation": {"form": {}}})
    assert URL.missing_capability(url, caps) == ({} if url_ok else {"elicitation": {"url": {}}})


# -- formats -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("check", "good", "bad"),
    [
        (
            is_email,
            ["a@b", "first.last+tag@example.co.uk", "x_y-z@sub.example.org", "ü@exämple.de"],
            [
                "",
                "a",
                "@b",
                "a@",
                "a@@b",
                "a b@c",
                "a@b c",
                ".a@b",
                "a.@b",
                "a..b@c",
                "a@b..c",
                "a@.b",
                "a@b@c",
            ],
        ),
        (
            is_uri,
            [
                "https://x.org",
                "urn:isbn:0451450523",
                "mailto:a@b.c",
                "file:///tmp/x",
                "x:",
                "a+b.c-d:rest%20ok",
            ],
            [
                "",
                "no-scheme",
                "/rel",
                "1http://x",
                "http://x y",
                "http://x/<>",
                "http://x/%2",
                "http://x/\x00",
            ],
        ),
        (
            is_date,
            ["2024-02-29", "2000-02-29", "1999-12-31", "0001-01-01"],
            [
                "2023-02-29",
                "1900-02-29",
                "2024-04-31",
                "2024-13-01",
                "2024-00-10",
                "2024-01-00",
                "24-01-01",
                "2024-1-01",
                "20240101",
                "2024-01-01T00:00:00Z",
                " 2024-01-01",
            ],
        ),
        (
            is_date_time,
            [
                "2026-07-28T12:30:00Z",
                "2026-07-28t12:30:00z",
                "2026-07-28T12:30:00.123456+05:30",
                "2026-12-31T23:59:60Z",
                "2026-07-28T00:00:00-00:00",
            ],
            [
                "2026-07-28T12:30:00",
                "2026-07-28 12:30:00Z",
                "2026-07-28T24:00:00Z",
                "2026-07-28T12:60:00Z",
                "2026-07-28T12:30:61Z",
                "2026-07-28T12:30Z",
                "2026-02-30T12:30:00Z",
                "2026-07-28T12:30:00+24:00",
                "2026-07-28T12:30:00+0530",
                "2026-07-28",
            ],
        ),
    ],
)
def test_format_checks(check, good, bad):
    for value in good:
        assert check(value), value
    for value in bad:
        assert not check(value), value


class Mixed(TypedDict, total=False):
    must: Required[str]
    maybe: Annotated[int | None, "how many"]


@dataclasses.dataclass
class Either_order:
    first: Annotated[int | None, "inside"] = None
    second: Annotated[int, "outside"] | None = None


def test_optional_and_annotated_nest_either_way():
    mixed = rondo.elicit.form("m", Mixed)["params"]["requestedSchema"]
    assert mixed == {
        "type": "object",
        "properties": {
            "must": {"type": "string"},
            "maybe": {"type": "integer", "description": "how many"},
        },
        "required": ["must"],
    }
    either = rondo.elicit.form("m", Either_order)["params"]["requestedSchema"]
    assert either == {
        "type": "object",
        "properties": {
            "first": {"type": "integer", "description": "inside"},
            "second": {"type": "integer", "description": "outside"},
        },
    }


@pytest.mark.parametrize("caps", [None, [], "elicitation"])
def test_capabilities_that_are_not_objects_declare_nothing(caps):
    assert not FORM.is_supported(form_request(), caps)
    assert not URL.is_supported(rondo.elicit.url("m", "https://example.com"), caps)
    assert FORM.missing_capability(form_request(), caps) == {"elicitation": {"form": {}}}
