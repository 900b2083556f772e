"""Admission: the checks every input_required outcome passes, however it was produced."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..wire.errors import internal_error, missing_capability
from ..wire.meta import INPUT_METHODS


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


def check_requests(requests: Mapping[str, Any]) -> None:
    """A handler's questions must be well formed: a bad one is the server's bug (-32603)."""
    from ..kinds import kind_for

    for key, request in requests.items():
        if not isinstance(key, str) or not key:
            raise internal_error("input request keys must be non-empty strings")
        try:
            kind_for(request).validate_request(request)
        except ValueError as exc:
            raise internal_error(f"input request {key!r} is invalid: {exc}") from None
