"""Mcp-Name / Mcp-Param-* values and x-mcp-header rules (rondo.wire.headers, shared by server and client)."""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rondo.wire.headers import InvalidToolHeaders, encode_value, header_bindings, param_headers


def decode(value: str) -> str:
    if value.startswith("=?base64?") and value.endswith("?="):
        return base64.b64decode(value[9:-2]).decode("utf-8")
    return value


@pytest.mark.parametrize(("value", "wire"), [
    ("us-west1", "us-west1"),
    ("us west 1", "us west 1"),
    ("", ""),
    (42, "42"),
    (-7, "-7"),
    (True, "true"),
    (False, "false"),
    ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
    (" padded ", "=?base64?IHBhZGRlZCA=?="),
    ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
    ("\tindented", "=?base64?CWluZGVudGVk?="),
])
def test_values_from_the_spec(value: Any, wire: str) -> None:
    assert encode_value(value) == wire


@given(st.text())
def test_any_string_survives_and_is_header_safe(text: str) -> None:
    wire = encode_value(text)
    assert decode(wire) == text
    assert all(0x20 <= ord(ch) <= 0x7E for ch in wire)
    assert wire == wire.strip()


def schema(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def test_bindings_follow_properties_chains() -> None:
    bindings = header_bindings(schema(
        region={"type": "string", "x-mcp-header": "Region"},
        nested={"type": "object", "properties": {"flag": {"type": "boolean", "x-mcp-header": "Flag"}}},
        plain={"type": "string"},
    ))
    assert bindings == [(("region",), "Region"), (("nested", "flag"), "Flag")]


@pytest.mark.parametrize(("bad", "reason"), [
    (schema(a={"type": "string", "x-mcp-header": ""}), "x-mcp-header on a is empty"),
    (schema(a={"type": "string", "x-mcp-header": "has space"}), "'has space' on a has characters not allowed"),
    (schema(a={"type": "string", "x-mcp-header": "Colon:Name"}), "'Colon:Name' on a has characters not allowed"),
    (schema(a={"type": "string", "x-mcp-header": "Näme"}), "'Näme' on a has characters not allowed"),
    (schema(a={"type": "string", "x-mcp-header": "Ctl\x01"}), "'Ctl\\x01' on a has characters not allowed"),
    (schema(a={"type": "string", "x-mcp-header": "Dup"}, b={"type": "integer", "x-mcp-header": "dup"}),
     "'dup' is not unique"),
    (schema(a={"type": "number", "x-mcp-header": "N"}), "'N' on a needs a string, integer or boolean property, not 'number'"),
    (schema(a={"type": "object", "x-mcp-header": "O"}), "'O' on a needs a string, integer or boolean property, not 'object'"),
    (schema(a={"type": "array", "items": {"type": "string"}, "x-mcp-header": "A"}),
     "'A' on a needs a string, integer or boolean property, not 'array'"),
    (schema(a={"type": "null", "x-mcp-header": "Z"}), "'Z' on a needs a string, integer or boolean property, not 'null'"),
    (schema(a={"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}), "under a is not reachable"),
    (schema(a={"anyOf": [{"type": "string", "x-mcp-header": "U"}]}), "under a is not reachable"),
    ({"type": "object", "$defs": {"d": {"type": "string", "x-mcp-header": "D"}}, "properties": {}},
     "under the root is not reachable"),
])
def test_invalid_annotations_drop_the_tool(bad: dict[str, Any], reason: str) -> None:
    with pytest.raises(InvalidToolHeaders, match=re.escape(reason)):
        header_bindings(bad)


def test_param_headers_skip_null_and_absent() -> None:
    bindings = [(("region",), "Region"), (("verbose",), "Verbose"), (("n", "count"), "Count")]
    headers = param_headers(bindings, {"region": "eu", "verbose": None, "n": {"count": 3}})
    assert headers == {"Mcp-Param-Region": "eu", "Mcp-Param-Count": "3"}
    assert param_headers(bindings, None) == {}
