"""JSON-RPC 2.0 message shapes both peers share: ids, requests, responses, errors.

Pure functions of decoded messages; no I/O. The server's transports and core, and the client,
all read messages through these, so a shape rule lives in exactly one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import INVALID_REQUEST, McpError

Json = dict[str, Any]


def valid_id(rid: Any) -> bool:
    """Is this a usable JSON-RPC request id (a string or an integer, never a bool or null)?"""
    return rid is not None and not isinstance(rid, bool) and isinstance(rid, str | int)


def readable_id(msg: Any) -> Any:
    """The message's id if it is a valid one, else None (to answer an unreadable request)."""
    rid = msg.get("id") if isinstance(msg, Mapping) else None
    return rid if valid_id(rid) else None


def is_response(msg: Mapping[str, Any]) -> bool:
    """A response to one of our requests: an id, a result or an error, and no method."""
    return "id" in msg and "method" not in msg and ("result" in msg or "error" in msg)


def result_response(rid: Any, result: Any) -> Json:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def error_response(rid: Any, exc: McpError) -> Json:
    # An unreadable id is omitted: `id: null` is not a RequestId in the MCP schemas.
    if rid is None:
        return {"jsonrpc": "2.0", "error": exc.to_error()}
    return {"jsonrpc": "2.0", "id": rid, "error": exc.to_error()}


def request_shape(msg: Any) -> tuple[Any, str, Json, bool]:
    """Check the JSON-RPC request/notification shape: returns (id, method, params, is_request)."""
    if type(msg) is not dict and not isinstance(msg, dict):
        raise McpError(INVALID_REQUEST, "Invalid Request: expected a JSON object")
    rid = msg.get("id")
    if rid is None:
        has_id = "id" in msg
        if has_id:
            raise McpError(INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
    else:
        has_id = True
        kind = type(rid)
        if kind is not int and kind is not str and not valid_id(rid):  # bool is its own type
            raise McpError(INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
    if msg.get("jsonrpc") != "2.0":
        raise McpError(INVALID_REQUEST, "Invalid Request: jsonrpc must be \"2.0\"")
    method = msg.get("method")
    if type(method) is not str and not isinstance(method, str):
        if "result" in msg or "error" in msg:
            raise McpError(INVALID_REQUEST, "Invalid Request: this endpoint takes no responses")
        raise McpError(INVALID_REQUEST, "Invalid Request: method must be a string")
    if "result" in msg or "error" in msg:
        raise McpError(INVALID_REQUEST, "Invalid Request: a message is a request or a response, not both")
    params = msg.get("params", {})
    if type(params) is not dict and not isinstance(params, dict):
        raise McpError(INVALID_REQUEST, "Invalid Request: params must be an object")
    return rid, method, params, has_id


def not_an_object(msg: Any) -> McpError:
    """The error for a decoded message that is not one JSON-RPC object (batches included)."""
    what = "batches are not supported" if isinstance(msg, list) else "expected a JSON object"
    return McpError(INVALID_REQUEST, f"Invalid Request: {what}")


def duplicate_id(rid: Any) -> McpError:
    return McpError(INVALID_REQUEST, f"Duplicate request id {rid!r}")
