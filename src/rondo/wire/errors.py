"""JSON-RPC and MCP error codes, the exception that carries them, and their HTTP statuses."""

from __future__ import annotations

from typing import Any

import msgspec

# What decoding untrusted JSON can raise: malformed input, or nesting deep enough to exhaust
# the decoder's recursion limit (a few kilobytes of "[" do it).
DECODE_ERRORS: tuple[type[Exception], ...] = (msgspec.DecodeError, RecursionError)

PARSE_ERROR = -32700


def parse_error(exc: BaseException) -> McpError:
    """The -32700 for undecodable input, saying when the JSON was valid but a number was too
    large to take (integers beyond 64 bits, or more digits than Python converts)."""
    if "out of range" in str(exc) or "digits" in str(exc):
        return McpError(PARSE_ERROR, "Parse error: number too large")
    return McpError(PARSE_ERROR, "Parse error: invalid JSON")


def undecodable(body: bytes, exc: BaseException) -> tuple[Any, McpError]:
    """The id to answer and the error for a body msgspec refused.

    msgspec refuses a lone surrogate escape (`"\\ud800"`) in a string, but such a body is
    syntactically valid JSON (RFC 8259 section 8.2): it is answered -32602 naming the field
    (`data: {"field": "params.arguments.text"}`), with the request's id, not -32700. Only this
    cold path looks: a body without a surrogate escape costs one byte search more. A body nested
    past the decoder's recursion limit gets the nesting bound's -32602 (`wire/bounds.py`).
    """
    if isinstance(exc, RecursionError):  # nested past the decoder's own limit: the one bound
        from .bounds import nesting_error

        return None, nesting_error()
    if b"\\u" in body:
        found = _lone_surrogate(body)
        if found is not None:
            return found
    return None, parse_error(exc)


def _lone_surrogate(body: bytes) -> tuple[Any, McpError] | None:
    import json  # only for bodies msgspec refused and that hold a \u escape
    import re

    if re.search(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}", body) is None:
        return None
    try:
        msg = json.loads(body)
    except (ValueError, RecursionError):
        return None  # really invalid (or too deep for the stdlib): the usual -32700
    if not isinstance(msg, dict):
        return None  # not a request at all
    field = _surrogate_field(msg)
    if field is None:
        return None
    rid = msg.get("id")
    if not (isinstance(rid, int | str) and not isinstance(rid, bool)) or _has_surrogate(rid):
        rid = None
    return rid, McpError(INVALID_PARAMS, f"Invalid params: lone surrogate in {field}",
                         {"field": field})


def _has_surrogate(value: object) -> bool:
    return isinstance(value, str) and any("\ud800" <= c <= "\udfff" for c in value)


def _surrogate_field(msg: Any) -> str | None:
    """The dotted path (`params.arguments.items[2]`) of the first string, key or value, that
    holds a lone surrogate. Iterative, and each step keeps only a link to its parent, so deep or
    wide input costs time linear in its size; the path is built once, at most 256 characters."""
    Trail = tuple[Any, str] | None  # (parent trail, this step) or None at the top
    stack: list[tuple[Trail, Any]] = [(None, msg)]
    while stack:
        trail, value = stack.pop()
        if isinstance(value, dict):
            for key in reversed(list(value)):
                if _has_surrogate(key):
                    return _path((trail, _step(trail, ascii(key))))
                stack.append(((trail, _step(trail, key)), value[key]))
        elif isinstance(value, list):
            stack.extend(((trail, f"[{i}]"), item) for i, item in reversed(list(enumerate(value))))
        elif _has_surrogate(value):
            return _path(trail) or "(message)"
    return None


def _step(trail: Any, key: str) -> str:
    key = key if len(key) <= 64 else key[:61] + "..."
    return key if trail is None else "." + key


def _path(trail: Any) -> str:
    steps: list[str] = []
    while trail is not None:
        trail, step = trail
        steps.append(step)
    path = "".join(reversed(steps))
    return path if len(path) <= 256 else "..." + path[-253:]
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
HEADER_MISMATCH = -32020
MISSING_CAPABILITY = -32021
UNSUPPORTED_VERSION = -32022

# Statuses the 2026-07-28 transport mandates, plus the Python SDK's choice where it is silent
# (see the spec digest §2.5): parse/invalid errors are the client's fault (400), an unknown
# method is 404, everything else rides on 200.
_HTTP_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    METHOD_NOT_FOUND: 404,
    HEADER_MISMATCH: 400,
    MISSING_CAPABILITY: 400,
    UNSUPPORTED_VERSION: 400,
}


def http_status(code: int) -> int:
    """The HTTP status a JSON-RPC error with this code is sent with on Streamable HTTP."""
    return _HTTP_STATUS.get(code, 200)


class McpError(Exception):
    """A JSON-RPC error to send to the peer: raise it from a handler to answer with an error."""

    __slots__ = ("code", "message", "data")

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_error(self) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err

    def __repr__(self) -> str:
        return f"McpError({self.code}, {self.message!r})"


def invalid_params(message: str, data: Any = None) -> McpError:
    return McpError(INVALID_PARAMS, message, data)


def method_not_found(method: str) -> McpError:
    return McpError(METHOD_NOT_FOUND, f"Method not found: {method}")


def internal_error(message: str = "Internal error") -> McpError:
    return McpError(INTERNAL_ERROR, message)


def missing_capability(required: dict[str, Any]) -> McpError:
    return McpError(
        MISSING_CAPABILITY,
        "Missing required client capability",
        {"requiredCapabilities": required},
    )


def resource_not_found(uri: str) -> McpError:
    """The 2026-07-28 answer for a resource that does not exist (SEP-2164)."""
    return McpError(INVALID_PARAMS, "Resource not found", {"uri": uri})


# One message for every refused `requestState`: the client learns nothing about which check
# failed (the real reason is logged at debug level by the state boundary).
STATE_REJECTED_MESSAGE = (
    "Invalid requestState: altered, expired, already used, or not issued for this request"
)


def state_rejected() -> McpError:
    """The one error every refused `requestState` becomes (-32602, fixed message, no data)."""
    return McpError(INVALID_PARAMS, STATE_REJECTED_MESSAGE)


# 2025-11-25 codes that 2026-07-28 replaced or never had.
LEGACY_RESOURCE_NOT_FOUND = -32002  # 2026-07-28 uses -32602 (SEP-2164)
SESSION_NOT_FOUND = -32001
SERVER_BUSY = -32000
