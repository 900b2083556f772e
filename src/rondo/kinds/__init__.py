"""Input-request kinds for Multi Round-Trip Requests: one table, one shape per kind.

`KINDS` lists every kind; `kind_for(request)` finds the one a request belongs to. Admission on
the server, and the client's handlers (which handler answers a kind, with what typed request,
and what capability that declares) loop over this table, so adding a kind is one more entry
here and one more module beside this one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .base import MISSING, Capabilities, Kind, NotDeclared, json_type, merge_capabilities

if TYPE_CHECKING:
    from .elicit import ElicitResult as ElicitResult
    from .roots import Root as Root
    from .roots import RootList as RootList
    from .sampling import SamplingResult as SamplingResult

    KINDS: tuple[Kind, ...]
    METHODS: frozenset[str]  # what a 2025-11-25 client may be asked

# The table is built on first use, so importing `rondo.elicit` (say) for a server's module-level
# questions does not load the sampling and roots kinds as well.
_BY_METHOD: dict[str, tuple[Kind, ...]] = {}
_TABLE: tuple[Kind, ...] = ()
_METHODS: frozenset[str] = frozenset()
_LAZY = {"ElicitResult": "elicit", "Root": "roots", "RootList": "roots",
         "SamplingResult": "sampling"}


def _kinds() -> tuple[Kind, ...]:
    global _TABLE, _METHODS
    if not _TABLE:
        from .elicit import FORM, URL
        from .roots import ROOTS
        from .sampling import SAMPLING

        table = (FORM, URL, SAMPLING, ROOTS)
        for kind in table:
            _BY_METHOD[kind.method] = (*_BY_METHOD.get(kind.method, ()), kind)
        _METHODS = frozenset(kind.method for kind in table)
        _TABLE = table
    return _TABLE

__all__ = [
    "KINDS",
    "MISSING",
    "ElicitRequest",
    "ElicitResult",
    "Kind",
    "NotDeclared",
    "SampleRequest",
    "form_defaults",
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
    if not _BY_METHOD:
        _kinds()
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
    if name == "KINDS":
        return _kinds()
    if name == "METHODS":
        _kinds()
        return _METHODS
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    # The client's typed requests load on first use: a server never needs them.
    if name in ("ElicitRequest", "SampleRequest", "form_defaults"):
        from . import requests

        return getattr(requests, name)
    raise AttributeError(f"module 'rondo.kinds' has no attribute {name!r}")
