"""Input-request kinds for Multi Round-Trip Requests: one table, one shape per kind.

`KINDS` lists every kind; `kind_for(request)` finds the one a request belongs to. Admission on
the server, and the client's handlers (which handler answers a kind, with what typed request,
and what capability that declares) loop over this table, so adding a kind is one more entry
here and one more module beside this one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import MISSING, Capabilities, Kind, NotDeclared, json_type, merge_capabilities
from .elicit import FORM, URL, ElicitResult
from .roots import ROOTS, Root, RootList
from .sampling import SAMPLING, SamplingResult

KINDS: tuple[Kind, ...] = (FORM, URL, SAMPLING, ROOTS)
_BY_METHOD: dict[str, tuple[Kind, ...]] = {}
for _kind in KINDS:
    _BY_METHOD[_kind.method] = (*_BY_METHOD.get(_kind.method, ()), _kind)
METHODS = frozenset(kind.method for kind in KINDS)  # what a 2025-11-25 client may be asked

__all__ = [
    "KINDS",
    "MISSING",
    "ElicitRequest",
    "ElicitResult",
    "Kind",
    "NotDeclared",
    "SampleRequest",
    "form_defaults",
    "merge_capabilities",
    "Root",
    "RootList",
    "SamplingResult",
    "kind_for",
    "merge_capabilities",
    "missing_capabilities",
    "response",
]


def kind_for(request: Mapping[str, Any]) -> Kind:
    """The kind `request` belongs to; ValueError for anything that is not an input request."""
    if not isinstance(request, dict) and not isinstance(request, Mapping):
        raise ValueError(f"an input request must be an object, got {json_type(request)}")
    method = request.get("method")
    candidates = _BY_METHOD.get(method) if isinstance(method, str) else None
    if candidates is not None:
        if len(candidates) == 1:
            return candidates[0]
        for kind in candidates:
            if kind.matches(request):
                return kind
    if method == "elicitation/create":
        params = request.get("params")
        mode = params.get("mode") if isinstance(params, Mapping) else None
        raise ValueError(f"unknown elicitation mode {mode!r}")
    raise ValueError(f"{method!r} is not an input request method")


def missing_capabilities(
    requests: Mapping[str, Mapping[str, Any]], client_caps: Mapping[str, Any] | None
) -> Capabilities:
    """One ClientCapabilities object naming every need the client did not declare (`{}` if none)."""
    missing: Capabilities = {}
    for request in requests.values():
        merge_capabilities(missing, kind_for(request).missing_capability(request, client_caps))
    return missing


def response(ctx: Any, key: str, request: Mapping[str, Any]) -> Any:
    """The client's validated answer to `request` under `key`, or `MISSING` if there is none.

    A malformed answer raises `McpError(-32602)`: the client sent it, so it is the client's
    error. A malformed `request` raises ValueError: that one is the handler's bug.
    """
    answers = ctx.input_responses or {}
    if key not in answers:
        return MISSING
    kind = kind_for(request)
    kind.validate_request(request)
    try:
        return kind.read_answer(request, answers[key])
    except ValueError as exc:
        from ..wire.errors import INVALID_PARAMS, McpError

        raise McpError(INVALID_PARAMS, f"Invalid input response for '{key}': {exc}") from None


def __getattr__(name: str) -> Any:
    # The client's typed requests load on first use: a server never needs them.
    if name in ("ElicitRequest", "SampleRequest", "form_defaults"):
        from . import requests

        return getattr(requests, name)
    raise AttributeError(f"module 'rondo.kinds' has no attribute {name!r}")
