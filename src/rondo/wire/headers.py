"""Header values that mirror body fields (`Mcp-Name`, `Mcp-Param-*`) and their encoding.

A value that cannot travel as a plain header value is sent as `=?base64?<Base64 UTF-8>?=`.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

_PREFIX = "=?base64?"
_SUFFIX = "?="


class HeaderValueError(ValueError):
    """A header value with forbidden characters or a broken Base64 sentinel."""


def _plain_ok(value: str) -> bool:
    if value != value.strip(" \t"):
        return False
    if value.startswith(_PREFIX) and value.endswith(_SUFFIX):
        return False
    return all(0x20 <= ord(c) < 0x7F for c in value)


def encode_value(value: Any) -> str:
    """The header form of a string, integer or boolean body value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, str):
        raise TypeError(f"header values are strings, integers or booleans, not {type(value).__name__}")
    if _plain_ok(value):
        return value
    return _PREFIX + base64.b64encode(value.encode()).decode() + _SUFFIX


def decode_value(raw: str) -> str:
    """Decode a received header value (already stripped of optional whitespace)."""
    if any(ord(c) < 0x20 and c != "\t" or ord(c) == 0x7F for c in raw):
        raise HeaderValueError("header value contains control characters")
    if len(raw) >= len(_PREFIX) + len(_SUFFIX) and raw.startswith(_PREFIX) and raw.endswith(_SUFFIX):
        payload = raw[len(_PREFIX) : -len(_SUFFIX)]
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
