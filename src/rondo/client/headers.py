"""HTTP header values the 2026-07-28 client sends: `Mcp-Name` and `Mcp-Param-*` (SEP-2243).

`x-mcp-header` annotations on a tool's input schema name arguments to mirror into headers.
A tool whose annotations break the rules is dropped from the client's view (the spec's MUST
for HTTP clients); `header_bindings` says why.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any

_SENTINEL = re.compile(r"^=\?base64\?.*\?=$", re.DOTALL)
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")  # RFC 9110 tchar
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})
_MAX_SAFE_INT = 2**53 - 1
# Keywords whose subschemas are not reachable by a plain `properties` chain.
_OPAQUE_KEYS = ("items", "prefixItems", "additionalProperties", "patternProperties", "anyOf",
                "oneOf", "allOf", "not", "if", "then", "else", "$defs", "definitions",
                "dependentSchemas", "contains", "unevaluatedProperties", "unevaluatedItems")


def encode_value(value: str | int | bool) -> str:
    """A header value for a string, integer or boolean, base64-wrapped when not plain ASCII."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if _is_plain(value):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def _is_plain(text: str) -> bool:
    if text != text.strip() or _SENTINEL.match(text):
        return False
    return all(0x20 <= ord(ch) <= 0x7E for ch in text)


Binding = tuple[tuple[str, ...], str]  # (property path, header name)


class InvalidToolHeaders(ValueError):
    """A tool's `x-mcp-header` annotations break the rules; the message says which and why."""


def header_bindings(input_schema: Any) -> list[Binding]:
    """The (argument path, header name) pairs a tool's schema declares; raises InvalidToolHeaders."""
    bindings: list[Binding] = []
    if isinstance(input_schema, Mapping):
        _walk(input_schema, (), bindings)
    seen: set[str] = set()
    for _, name in bindings:
        if name.lower() in seen:
            raise InvalidToolHeaders(f"x-mcp-header {name!r} is not unique (case-insensitive)")
        seen.add(name.lower())
    return bindings


def _walk(schema: Mapping[str, Any], path: tuple[str, ...], out: list[Binding]) -> None:
    if "x-mcp-header" in schema:
        if not path:
            raise InvalidToolHeaders("x-mcp-header on the schema root is not allowed")
        out.append((path, _check_annotation(schema, path)))
    props = schema.get("properties")
    if isinstance(props, Mapping):
        for key, sub in props.items():
            if isinstance(sub, Mapping):
                _walk(sub, (*path, str(key)), out)
    for key in _OPAQUE_KEYS:
        _walk_any(schema.get(key), path, out)


def _walk_any(node: Any, path: tuple[str, ...], out: list[Binding]) -> None:
    if isinstance(node, Mapping):
        if "x-mcp-header" in node:
            raise InvalidToolHeaders(
                f"x-mcp-header under {'.'.join(path) or 'the root'} is not reachable "
                "through `properties` alone"
            )
        for value in node.values():
            _walk_any(value, path, out)
    elif isinstance(node, list):
        for item in node:
            _walk_any(item, path, out)


def _check_annotation(schema: Mapping[str, Any], path: tuple[str, ...]) -> str:
    where = ".".join(path)
    name = schema["x-mcp-header"]
    if not isinstance(name, str) or not name:
        raise InvalidToolHeaders(f"x-mcp-header on {where} is empty")
    if not _TOKEN.match(name):
        raise InvalidToolHeaders(f"x-mcp-header {name!r} on {where} has characters not allowed in a header name")
    if "$ref" in schema:
        raise InvalidToolHeaders(f"x-mcp-header on {where} sits next to $ref")
    type_ = schema.get("type")
    if type_ not in _HEADER_TYPES:
        raise InvalidToolHeaders(
            f"x-mcp-header {name!r} on {where} needs a string, integer or boolean property, "
            f"not {type_!r}"
        )
    return name


def param_headers(bindings: list[Binding], arguments: Mapping[str, Any] | None) -> dict[str, str]:
    """The `Mcp-Param-*` headers for these arguments (absent and null values send none)."""
    headers: dict[str, str] = {}
    for path, name in bindings:
        value: Any = arguments or {}
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        if value is None:
            continue
        if isinstance(value, bool | str) or (isinstance(value, int) and abs(value) <= _MAX_SAFE_INT):
            headers[f"Mcp-Param-{name}"] = encode_value(value)
        elif isinstance(value, float) and value.is_integer() and abs(value) <= _MAX_SAFE_INT:
            headers[f"Mcp-Param-{name}"] = encode_value(int(value))
        else:
            raise ValueError(f"argument {'.'.join(path)} = {value!r} cannot be sent as header {name}")
    return headers
