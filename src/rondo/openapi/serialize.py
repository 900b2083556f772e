"""Parameter values as OpenAPI styles say: path (simple, label, matrix), query (form,
spaceDelimited, pipeDelimited, deepObject; explode or not), headers and cookies (simple, form).

Values were checked by no one before they get here (a tool's explicit schema is not enforced),
so every shape is checked and a wrong one is a `ValueError` the call reports as a tool error.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, unquote

import msgspec

from .operations import Param


def scalar(value: Any, what: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, float) else str(value)
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    raise ValueError(f"{what} must be a string, number or boolean here, got {type(value).__name__}")


def _pairs(value: dict[str, Any], what: str) -> list[tuple[str, str]]:
    return [(str(k), scalar(v, f"{what}.{k}")) for k, v in value.items()]


# -- path --------------------------------------------------------------------------------------


def path_value(param: Param, value: Any) -> str:
    """The percent-encoded text that replaces `{name}`; a value that could leave its segment
    (`/`, `\\`, `.` or `..`, at any layer of percent-encoding) is refused."""
    what = f"path parameter {param.name!r}"
    if param.as_json:
        return quote(msgspec.json.encode(value).decode(), safe="")
    if isinstance(value, list):
        items = [_segment(param, scalar(v, what), what) for v in value]
        sep = {"simple": ",", "label": "." if param.explode else ",",
               "matrix": f";{param.name}=" if param.explode else ","}[param.style]
        text = sep.join(items)
    elif isinstance(value, dict):
        pairs = [(_segment(param, k, what), _segment(param, v, what))
                 for k, v in _pairs(value, what)]
        if param.explode:
            text = ({"label": ".", "matrix": ";"}.get(param.style, ",")).join(
                f"{k}={v}" for k, v in pairs)
            return {"label": ".", "matrix": ";"}.get(param.style, "") + text
        text = ",".join(f"{k},{v}" for k, v in pairs)
    else:
        text = _segment(param, scalar(value, what), what)
    if param.style == "label":
        return "." + text
    if param.style == "matrix":
        return f";{param.name}=" + text
    return text


def _segment(param: Param, raw: str, what: str) -> str:
    if raw == "" and param.required:
        raise ValueError(f"{what} must not be empty")
    pieces = raw.split("/") if param.multi_segment else [raw]
    for piece in pieces:
        _refuse_escape(piece, what, param.multi_segment)
    return "/".join(quote(piece, safe="") for piece in pieces)


def _refuse_escape(piece: str, what: str, multi: bool) -> None:
    if multi and piece == "":
        raise ValueError(f"{what} has an empty path segment")
    seen = piece
    for _ in range(5):  # every layer of percent-encoding an upstream might undo
        if seen in (".", "..") or "/" in seen or "\\" in seen or "\x00" in seen:
            raise ValueError(f"{what} would leave its path segment ({piece!r})")
        decoded = unquote(seen)
        if decoded == seen:
            return
        seen = decoded
    raise ValueError(f"{what} is percent-encoded too many times ({piece!r})")


# -- query -------------------------------------------------------------------------------------


def query_pairs(param: Param, value: Any) -> list[tuple[str, str]]:
    name, what = param.name, f"query parameter {param.name!r}"
    if value is None:
        return []
    if param.as_json:
        return [(name, msgspec.json.encode(value).decode())]
    if param.style == "deepObject":
        if not isinstance(value, dict):
            raise ValueError(f"{what} (deepObject) must be an object")
        return [(f"{name}[{k}]", v) for k, v in _pairs(value, what)]
    if isinstance(value, list):
        items = [scalar(v, what) for v in value]
        if param.explode:
            return [(name, item) for item in items]
        sep = {"form": ",", "spaceDelimited": " ", "pipeDelimited": "|"}[param.style]
        return [(name, sep.join(items))]
    if isinstance(value, dict):
        if param.explode:
            return _pairs(value, what)
        return [(name, ",".join(f"{k},{v}" for k, v in _pairs(value, what)))]
    return [(name, scalar(value, what))]


# -- headers and cookies -----------------------------------------------------------------------


def header_value(param: Param, value: Any) -> str:
    what = f"header {param.name!r}"
    if param.as_json:
        text = msgspec.json.encode(value).decode()
    elif isinstance(value, list):
        text = ",".join(scalar(v, what) for v in value)
    elif isinstance(value, dict):
        pairs = _pairs(value, what)
        text = ",".join(f"{k}={v}" if param.explode else f"{k},{v}" for k, v in pairs)
    else:
        text = scalar(value, what)
    if any(c in text for c in "\r\n\x00"):
        raise ValueError(f"{what} must not contain line breaks")
    return text


def cookie_value(param: Param, value: Any) -> str:
    what = f"cookie {param.name!r}"
    if isinstance(value, list):
        text = ",".join(scalar(v, what) for v in value)
    elif isinstance(value, dict):
        text = ",".join(f"{k},{v}" for k, v in _pairs(value, what))
    else:
        text = scalar(value, what)
    return f"{param.name}={quote(text, safe='')}"
