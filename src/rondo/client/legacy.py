"""Answering a 2025-11-25 server's requests with the same handlers the input loop uses."""

from __future__ import annotations

from typing import Any

from rondo.client.handlers import Handlers
from rondo.client.loop import NoHandler, Unanswerable
from rondo.kinds import METHODS as ANSWERED
from rondo.wire.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND

Json = dict[str, Any]


async def answer_server_request(handlers: Handlers, message: Json) -> Json:
    """The JSON-RPC response to one server→client request."""
    rid = message.get("id")
    method = message.get("method")
    if method == "ping":
        return {"jsonrpc": "2.0", "id": rid, "result": {}}
    if method not in ANSWERED:
        return _error(rid, METHOD_NOT_FOUND, f"Method not found: {method}")
    params = message.get("params")
    request = {"method": method, "params": params if isinstance(params, dict) else {}}
    try:
        result = await handlers.answer(request, strict=False)
    except NoHandler as exc:
        return _error(rid, METHOD_NOT_FOUND, str(exc))
    except Unanswerable as exc:
        return _error(rid, INVALID_PARAMS, str(exc))
    except Exception as exc:  # the user's handler failed: tell the server, keep the client alive
        return _error(rid, INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def _error(rid: Any, code: int, message: str) -> Json:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}
