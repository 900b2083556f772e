"""JSON-RPC and MCP error codes, the exception that carries them, and their HTTP statuses."""

from __future__ import annotations

from typing import Any

import msgspec

# What decoding untrusted JSON can raise: malformed input, or nesting deep enough to exhaust
# the decoder's recursion limit (a few kilobytes of "[" do it).
DECODE_ERRORS: tuple[type[Exception], ...] = (msgspec.DecodeError, RecursionError)

PARSE_ERROR = -32700
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
