"""Header values that mirror body fields (`Mcp-Name`, `Mcp-Param-*`), their encoding, and the
`x-mcp-header` rule (SEP-2243) that server validation and client emission both read.

A value that cannot travel as a plain header value is sent as `=?base64?<Base64 UTF-8>?=`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

_PREFIX = "=?base64?"
_SUFFIX = "?="


class HeaderValueError(ValueError):
    """A header value with forbidden characters or a broken Base64 sentinel."""


def plain_header_value(value: str) -> bool:
    """Can this string travel as a header value as it is (no Base64 sentinel needed)?"""
    if value != value.strip(" \t"):
        return False
    if value.startswith(_PREFIX) and value.endswith(_SUFFIX):
        return False
    return value.isascii() and value.isprintable()  # every character in 0x20..0x7E


def encode_value(value: Any) -> str:
    """The header form of a string, integer or boolean body value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, str):
        raise TypeError(f"header values are strings, integers or booleans, not {type(value).__name__}")
    if plain_header_value(value):
        return value
    import base64  # the rare encoded value; plain ones keep start-up free of it

    return _PREFIX + base64.b64encode(value.encode()).decode() + _SUFFIX


def decode_value(raw: str) -> str:
    """Decode a received header value (already stripped of optional whitespace)."""
    if raw.isascii() and raw.isprintable() and not raw.startswith(_PREFIX):
        return raw  # the common case: plain printable ASCII
    if any(ord(c) < 0x20 and c != "\t" or ord(c) == 0x7F for c in raw):
        raise HeaderValueError("header value contains control characters")
    if len(raw) >= len(_PREFIX) + len(_SUFFIX) and raw.startswith(_PREFIX) and raw.endswith(_SUFFIX):
        payload = raw[len(_PREFIX) : -len(_SUFFIX)]
        import base64  # the rare encoded value; plain ones keep start-up free of it
        import binascii

        try:
            data = base64.b64decode(payload, validate=True)
            return data.decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            raise HeaderValueError("invalid Base64 in header value") from None
    if any(ord(c) > 0x7E for c in raw):
        raise HeaderValueError("header value contains non-ASCII characters")
    return raw


def matches(header: str, value: Any) -> bool:
    """Does a decoded header value equal a body value? Integers compare numerically."""
    if isinstance(value, bool):
        return header == ("true" if value else "false")
    if isinstance(value, int):
        try:
            number = float(header) if any(c in header for c in ".eE") else int(header)
        except ValueError:
            return False
        return number == value
    return isinstance(value, str) and header == value


# -- x-mcp-header annotations: the one rule the server's registration and the client share --

_TCHAR = frozenset("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})
_MAX_SAFE_INT = 2**53 - 1
# Keywords whose subschemas are not reachable by a plain `properties` chain.
_OPAQUE_KEYS = ("items", "prefixItems", "additionalProperties", "patternProperties", "anyOf",
                "oneOf", "allOf", "not", "if", "then", "else", "$defs", "definitions",
                "dependentSchemas", "contains", "unevaluatedProperties", "unevaluatedItems")

Binding = tuple[tuple[str, ...], str]  # (argument path, header name as declared)


class InvalidToolHeaders(ValueError):
    """A tool's `x-mcp-header` annotations break the rules; the message says which and why.

    The server refuses such a tool at registration; a client drops it from its view (the
    spec's MUST for HTTP clients), so the two can never disagree about a tool.
    """


def header_bindings(input_schema: Any) -> list[Binding]:
    """The (argument path, header name) pairs a tool's schema declares; raises InvalidToolHeaders.

    An annotation is valid only on a string, integer or boolean property reachable from the
    root through `properties` alone (not under `items`, `anyOf`, ..., nor next to `$ref`), with
    an RFC 9110 token for a name, unique case-insensitively within the tool.
    """
    bindings: list[Binding] = []
    if isinstance(input_schema, Mapping) and _mentions_annotation(input_schema):
        _walk(input_schema, (), bindings)
    seen: set[str] = set()
    for _, name in bindings:
        if name.lower() in seen:
            raise InvalidToolHeaders(f"x-mcp-header {name!r} is not unique (case-insensitive)")
        seen.add(name.lower())
    return bindings


def _mentions_annotation(schema: Mapping[str, Any]) -> bool:
    """Whether the key appears anywhere: one encode in C instead of a walk in Python, which
    matters for large generated schemas (an OpenAPI tool's `$defs`). Anything it cannot encode
    is walked."""
    import msgspec

    try:
        return b"x-mcp-header" in msgspec.json.encode(schema)
    except (TypeError, msgspec.EncodeError):
        return True


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
        _refuse_below(schema.get(key), path)


def _refuse_below(node: Any, path: tuple[str, ...]) -> None:
    if isinstance(node, Mapping):
        if "x-mcp-header" in node:
            raise InvalidToolHeaders(
                f"x-mcp-header under {'.'.join(path) or 'the root'} is not reachable "
                "through `properties` alone"
            )
        for value in node.values():
            _refuse_below(value, path)
    elif isinstance(node, list):
        for item in node:
            _refuse_below(item, path)


def _check_annotation(schema: Mapping[str, Any], path: tuple[str, ...]) -> str:
    where = ".".join(path)
    name = schema["x-mcp-header"]
    if not isinstance(name, str) or not name:
        raise InvalidToolHeaders(f"x-mcp-header on {where} is empty")
    if any(c not in _TCHAR for c in name):
        raise InvalidToolHeaders(
            f"x-mcp-header {name!r} on {where} has characters not allowed in a header name")
    if "$ref" in schema:
        raise InvalidToolHeaders(f"x-mcp-header on {where} sits next to $ref")
    kind = schema.get("type")
    if kind not in _HEADER_TYPES:
        raise InvalidToolHeaders(
            f"x-mcp-header {name!r} on {where} needs a string, integer or boolean property, "
            f"not {kind!r}"
        )
    return name


def argument_at(arguments: Any, path: tuple[str, ...]) -> Any:
    value: Any = arguments
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def param_headers(bindings: list[Binding], arguments: Mapping[str, Any] | None) -> dict[str, str]:
    """Client side: the `Mcp-Param-*` headers for these arguments (absent/null send none)."""
    headers: dict[str, str] = {}
    for path, name in bindings:
        value = argument_at(arguments or {}, path)
        if value is None:
            continue
        if isinstance(value, bool | str) or (isinstance(value, int) and abs(value) <= _MAX_SAFE_INT):
            headers[f"Mcp-Param-{name}"] = encode_value(value)
        elif isinstance(value, float) and value.is_integer() and abs(value) <= _MAX_SAFE_INT:
            headers[f"Mcp-Param-{name}"] = encode_value(int(value))
        else:
            raise ValueError(f"argument {'.'.join(path)} = {value!r} cannot be sent as header {name}")
    return headers


def check_param_headers(
    header: Callable[[str], str | None], bindings: list[Binding], arguments: Any
) -> str | None:
    """Server side: None when every `Mcp-Param-*` header mirrors its argument, else the reason.

    `header(lowercased_name)` returns the received value (optional whitespace stripped) or None.
    """
    for path, name in bindings:
        value = argument_at(arguments, path)
        if value is None:
            continue  # the client sends no header for an absent or null value
        label = f"Mcp-Param-{name}"
        raw = header("mcp-param-" + name.lower())
        if raw is None:
            return f"{label} header is required"
        try:
            decoded = decode_value(raw)
        except HeaderValueError as exc:
            return f"{label}: {exc}"
        if not matches(decoded, value):
            return f"{label} header value does not match the argument"
    return None
