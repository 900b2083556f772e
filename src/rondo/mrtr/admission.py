"""Admission: the checks every input_required outcome passes, however it was produced."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from ..wire.errors import internal_error, missing_capability
from ..wire.meta import INPUT_METHODS

_encode = msgspec.json.encode


def admit(ctx: Any, input_requests: dict[str, Any], has_state: bool) -> None:
    """Raise the JSON-RPC error this outcome deserves, or return if it may go to the client.

    Only the 2026-07-28 dialect admits input_required; the legacy one refuses it itself.
    """
    from ..kinds import missing_capabilities

    if ctx.request_method not in INPUT_METHODS:
        raise internal_error(
            f"{ctx.request_method} cannot answer input_required "
            "(only tools/call, prompts/get and resources/read can)"
        )
    if not input_requests and not has_state:
        raise internal_error("input_required needs at least one input request or a request state")
    check_requests(input_requests)
    missing = missing_capabilities(input_requests, ctx.client_capabilities)
    if missing:
        raise missing_capability(missing)


_VALID: dict[bytes, None] = {}  # encoded questions already validated (bounded: see below)
_VALID_LIMIT = 1024


def check_requests(requests: Mapping[str, Any]) -> None:
    """A handler's questions must be well formed: a bad one is the server's bug (-32603).

    Most tools ask the same few questions on every call, so a question whose exact encoding was
    validated before is not validated again (the check is a pure function of that encoding).
    """
    from ..kinds import kind_for

    for key, request in requests.items():
        if not isinstance(key, str) or not key:
            raise internal_error("input request keys must be non-empty strings")
        try:
            encoded = _encode(request)
        except (TypeError, ValueError, OverflowError):
            encoded = None  # not even JSON: validation says why
        if encoded is not None and encoded in _VALID:
            continue
        try:
            kind_for(request).validate_request(request)
        except ValueError as exc:
            raise internal_error(f"input request {key!r} is invalid: {exc}") from None
        if encoded is not None:
            if len(_VALID) >= _VALID_LIMIT:
                _VALID.clear()
            _VALID[encoded] = None
