"""Property tests: random flat schemas and answers, random junk, random unknown keywords."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import rondo.elicit
import rondo.roots
import rondo.sampling
from rondo.kinds import KINDS, kind_for, missing_capabilities
from rondo.kinds.elicit import FORM
from rondo.kinds.formschema import is_date, is_date_time, is_email, is_uri
from tests.helpers.wire_schema import assert_definition as assert_official

# -- strategies: a property schema together with a value that satisfies it --------------------------

words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8)
choices = st.lists(words, min_size=1, max_size=5, unique=True)
optional_text = st.none() | st.text(max_size=10)


def _annotate(prop: dict, title: str | None, description: str | None) -> dict:
    if title is not None:
        prop["title"] = title
    if description is not None:
        prop["description"] = description
    return prop


@st.composite
def string_field(draw):
    low = draw(st.none() | st.integers(0, 5))
    high = draw(st.none() | st.integers(low or 0, 12))
    prop = {"type": "string"}
    if low is not None:
        prop["minLength"] = low
    if high is not None:
        prop["maxLength"] = high
    value = draw(st.text(min_size=low or 0, max_size=high if high is not None else 12))
    return prop, value


def _whole_minute_offset(value: dt.datetime) -> bool:
    """RFC 3339 offsets are hours and minutes; some historic zones had seconds."""
    offset = value.utcoffset()
    return offset is not None and offset.total_seconds() % 60 == 0


FORMAT_VALUES = {
    "email": st.emails(),
    "uri": st.sampled_from(["https://example.com/a?b=c", "urn:x:y", "mailto:a@b.c", "file:///tmp"]),
    "date": st.dates().map(dt.date.isoformat),
    "date-time": st.datetimes(timezones=st.timezones())
    .filter(_whole_minute_offset)
    .map(lambda d: d.replace(microsecond=0).isoformat()),
}


@st.composite
def format_field(draw):
    fmt = draw(st.sampled_from(sorted(FORMAT_VALUES)))
    return {"type": "string", "format": fmt}, draw(FORMAT_VALUES[fmt])


@st.composite
def number_field(draw):
    integer = draw(st.booleans())
    numbers = st.integers(-1000, 1000) if integer else st.floats(-1e6, 1e6, allow_nan=False)
    low, high = sorted([draw(numbers), draw(numbers)])
    prop = {"type": "integer" if integer else "number"}
    if draw(st.booleans()):
        prop["minimum"] = low
    if draw(st.booleans()):
        prop["maximum"] = high
    if integer:
        value = draw(st.integers(low, high))
    elif math.ceil(low) <= math.floor(high) and draw(st.booleans()):
        value = draw(st.integers(math.ceil(low), math.floor(high)))  # a `number` takes integers too
    else:
        value = draw(st.floats(low, high, allow_nan=False))
    return prop, value


@st.composite
def single_select(draw):
    options = draw(choices)
    style = draw(st.sampled_from(["enum", "oneOf", "legacy"]))
    if style == "enum":
        prop = {"type": "string", "enum": options}
    elif style == "oneOf":
        prop = {"type": "string", "oneOf": [{"const": o, "title": o.upper()} for o in options]}
    else:
        prop = {"type": "string", "enum": options, "enumNames": [o.upper() for o in options]}
    return prop, draw(st.sampled_from(options))


@st.composite
def multi_select(draw):
    options = draw(choices)
    if draw(st.booleans()):
        prop = {"type": "array", "items": {"type": "string", "enum": options}}
    else:
        prop = {"type": "array", "items": {"anyOf": [{"const": o, "title": o} for o in options]}}
    picked = draw(st.lists(st.sampled_from(options), unique=True))
    if draw(st.booleans()):
        prop["minItems"] = draw(st.integers(0, len(picked)))
    if draw(st.booleans()):
        prop["maxItems"] = draw(st.integers(len(picked), len(options)))
    return prop, picked


boolean_field = st.tuples(st.just({"type": "boolean"}), st.booleans())

field = st.one_of(
    string_field(), format_field(), number_field(), single_select(), multi_select(), boolean_field
)


@st.composite
def form_case(draw):
    """(schema, content): a random flat schema and an answer it accepts."""
    names = draw(st.lists(words, min_size=0, max_size=6, unique=True))
    properties, content, required = {}, {}, []
    for name in names:
        prop, value = draw(field)
        prop = _annotate(dict(prop), draw(optional_text), draw(optional_text))
        if draw(st.booleans()):
            prop["default"] = value
        properties[name] = prop
        if draw(st.booleans()):
            required.append(name)
            content[name] = value
        elif draw(st.booleans()):
            content[name] = value
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema, content


def _wire_ints_only(content: dict) -> bool:
    """The official ElicitResult types content numbers as integers (a known schema.ts conflict)."""
    return not any(isinstance(v, float) for v in content.values())


# -- properties ------------------------------------------------------------------------------------


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(form_case())
def test_random_schemas_build_and_their_answers_are_accepted(case):
    schema, content = case
    request = rondo.elicit.form("Fill in", schema)
    assert_official("ElicitRequest", request)
    answer = {"action": "accept", "content": content}
    result = FORM.read_answer(request, answer)
    assert result.accepted
    assert result.content == content
    assert FORM.read_answer(request, result.to_dict()) == result
    if _wire_ints_only(content):
        assert_official("ElicitResult", result.to_dict())


@given(form_case(), st.data())
def test_dropping_a_required_field_is_rejected(case, data):
    schema, content = case
    assume(schema.get("required"))
    name = data.draw(st.sampled_from(schema["required"]))
    del content[name]
    with pytest.raises(ValueError, match=f"^content\\.{re.escape(name)}: is required$") as info:
        FORM.read_answer(rondo.elicit.form("m", schema), {"action": "accept", "content": content})
    assert str(info.value) == f"content.{name}: is required"


WRONG_TYPES = {
    "string": st.integers() | st.booleans() | st.none() | st.lists(st.text(), max_size=2),
    "number": st.text() | st.booleans() | st.none(),
    "integer": st.text()
    | st.booleans()
    | st.none()
    | st.floats().filter(lambda f: not f.is_integer()),
    "boolean": st.integers() | st.text() | st.none(),
    "array": st.text()
    | st.integers()
    | st.none()
    | st.dictionaries(st.text(), st.text(), max_size=1),
}


@given(form_case(), st.data())
def test_a_wrong_typed_value_is_rejected_naming_the_field(case, data):
    schema, content = case
    assume(schema["properties"])
    name = data.draw(st.sampled_from(sorted(schema["properties"])))
    bad = data.draw(WRONG_TYPES[schema["properties"][name]["type"]])
    content[name] = bad
    with pytest.raises(ValueError, match=f"^content\\.{re.escape(name)}: ") as info:
        FORM.read_answer(rondo.elicit.form("m", schema), {"action": "accept", "content": content})
    assert str(info.value).startswith(f"content.{name}")


ALLOWED_KEYWORDS = {
    "type",
    "title",
    "description",
    "default",
    "minLength",
    "maxLength",
    "format",
    "minimum",
    "maximum",
    "enum",
    "enumNames",
    "oneOf",
    "items",
    "minItems",
    "maxItems",
}


@given(field, st.text(min_size=1, max_size=12), st.integers() | st.text() | st.booleans())
def test_any_unknown_property_keyword_is_rejected(field_case, keyword, value):
    assume(keyword not in ALLOWED_KEYWORDS)
    prop = {**field_case[0], keyword: value}
    with pytest.raises(ValueError, match=f"^requestedSchema\\.properties\\.f\\.{re.escape(keyword)}: is not allowed") as info:
        rondo.elicit.form("m", {"type": "object", "properties": {"f": prop}})
    assert str(info.value).startswith(f"requestedSchema.properties.f.{keyword}: is not allowed")


@given(st.text(min_size=1, max_size=12), st.integers() | st.text())
def test_any_unknown_top_level_keyword_is_rejected(keyword, value):
    assume(keyword not in {"$schema", "type", "properties", "required"})
    with pytest.raises(ValueError, match=f"^requestedSchema\\.{re.escape(keyword)}: is not allowed") as info:
        rondo.elicit.form("m", {"type": "object", "properties": {}, keyword: value})
    assert str(info.value).startswith(f"requestedSchema.{keyword}: is not allowed")


json_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=12,
)
non_objects = json_scalars | st.lists(json_values, max_size=3)

ALL_REQUESTS = [
    rondo.elicit.form("m", {"type": "object", "properties": {"a": {"type": "string"}}}),
    rondo.elicit.url("m", "https://example.com"),
    rondo.sampling.create_message("hi", 5),
    rondo.roots.list(),
]


@given(non_objects, st.sampled_from(ALL_REQUESTS))
def test_any_non_object_answer_is_rejected_by_every_kind(answer, request):
    with pytest.raises(ValueError, match="answer must be an object"):
        kind_for(request).read_answer(request, answer)


answer_like = st.fixed_dictionaries(
    {},
    optional={
        "action": st.sampled_from(["accept", "decline", "cancel", "nope"]) | json_values,
        "content": json_values,
        "role": st.sampled_from(["user", "assistant"]) | json_values,
        "model": json_values,
        "stopReason": json_values,
        "roots": json_values,
        "_meta": json_values,
    },
)


@given(answer_like | json_values, st.sampled_from(ALL_REQUESTS))
def test_junk_answers_only_ever_raise_value_error(answer, request):
    try:
        value = kind_for(request).read_answer(request, answer)
    except ValueError:
        return
    # Whatever was accepted round-trips through its wire form.
    assert kind_for(request).read_answer(request, value.to_dict()) == value


junk_requests = json_values | st.fixed_dictionaries(
    {"method": st.sampled_from(["elicitation/create", "sampling/createMessage", "roots/list"])},
    optional={
        "params": json_values
        | st.fixed_dictionaries(
            {},
            optional={
                "mode": st.sampled_from(["form", "url"]) | json_values,
                "message": json_values,
                "requestedSchema": json_values,
                "url": json_values,
                "messages": json_values,
                "maxTokens": json_values,
                "tools": json_values,
                "toolChoice": json_values,
                "includeContext": json_values,
            },
        )
    },
)


@given(junk_requests, answer_like | json_values)
def test_junk_requests_only_ever_raise_value_error(request, answer):
    try:
        kind = kind_for(request)
    except ValueError:
        return
    assert isinstance(kind.required_capability(request), dict)
    for step in (kind.validate_request, lambda r: kind.read_answer(r, answer)):
        with contextlib.suppress(ValueError):
            step(request)


capability_trees = st.recursive(
    st.just({}) | st.none() | st.booleans(),
    lambda inner: st.dictionaries(
        st.sampled_from(
            ["elicitation", "form", "url", "sampling", "tools", "context", "roots", "x"]
        ),
        inner,
        max_size=4,
    ),
    max_leaves=8,
)


@given(capability_trees)
def test_missing_capabilities_is_empty_exactly_when_every_kind_is_supported(caps):
    caps = caps if isinstance(caps, dict) else {}
    requests = dict(enumerate(ALL_REQUESTS)) | {
        "t": rondo.sampling.create_message(
            "x", 5, tools=[{"name": "t", "inputSchema": {"type": "object"}}]
        )
    }
    missing = missing_capabilities({str(k): v for k, v in requests.items()}, caps)
    supported = all(kind_for(r).is_supported(r, caps) for r in requests.values())
    assert (missing == {}) == supported
    # Declaring what was missing is always enough, once the bare `elicitation: {}` spelling is
    # read as what it means (form) before a mode is added beside it.
    merged = json.loads(json.dumps(caps))
    elicitation = merged.get("elicitation")
    if isinstance(elicitation, dict) and "form" not in elicitation and "url" not in elicitation:
        elicitation["form"] = {}
    for key, value in missing.items():
        if not isinstance(merged.get(key), dict):
            merged[key] = {}
        for sub, leaf in value.items():
            if not isinstance(merged[key].get(sub), dict):
                merged[key][sub] = leaf
    assert missing_capabilities({str(k): v for k, v in requests.items()}, merged) == {}


@given(st.dates())
def test_every_real_date_passes(date):
    assert is_date(date.isoformat())


@given(st.datetimes(timezones=st.timezones()))
def test_every_zoned_datetime_passes(value):
    assume(_whole_minute_offset(value))
    assert is_date_time(value.isoformat()), value.isoformat()


@given(st.emails())
def test_generated_emails_pass(email):
    assert is_email(email)


@given(st.text(max_size=20))
def test_format_checks_never_crash(text):
    for check in (is_email, is_uri, is_date, is_date_time):
        assert check(text) in (True, False)


@given(st.text(max_size=20))
def test_no_kind_matches_a_random_method(method):
    assume(method not in {k.method for k in KINDS})
    with pytest.raises(ValueError, match=re.escape(f"{method!r} is not an input request method")):
        kind_for({"method": method, "params": {}})
