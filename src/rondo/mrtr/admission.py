"""Admission: the checks every input_required outcome passes, however it was produced."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..wire.errors import internal_error, missing_capability
from ..wire.meta import INPUT_METHODS

# The kinds and the question facts load with the first outcome admitted, not at start-up; then
# they are kept here, so no admission after the first runs an import statement.
_loaded: tuple[Any, Any, Any] | None = None


def _load() -> tuple[Any, Any, Any]:
    global _loaded
    from ..kinds import kind_for, merge_capabilities
    from .questions import question

    _loaded = (question, kind_for, merge_capabilities)
    return _loaded


def admit(ctx: Any, input_requests: dict[str, Any], has_state: bool) -> None:
    """Raise the JSON-RPC error this outcome deserves, or return if it may go to the client.

    Only the 2026-07-28 dialect admits input_required; the legacy one refuses it itself.
    """
    if ctx.request_method not in INPUT_METHODS:
        raise internal_error(
            f"{ctx.request_method} cannot answer input_required "
            "(only tools/call, prompts/get and resources/read can)"
        )
    if not input_requests and not has_state:
        raise internal_error("input_required needs at least one input request or a request state")
    # `check_requests` and `kinds.missing_capabilities` in one pass over the questions, each
    # question's kind found once (by `question`) for both.
    question, kind_for, merge = _loaded or _load()
    caps = ctx.client_capabilities
    # The facts `ctx.ask` found for these very questions this round (see `mrtr.ask.AskBook`).
    book = getattr(ctx, "_mrtr", None)
    known = book.digests if book is not None else None
    missing: dict[str, Any] = {}
    for key, request in input_requests.items():
        seen = known.get(key) if known else None
        kind = _checked(question, kind_for, key, request,
                        seen[1] if seen is not None and seen[0] is request else None)
        gap = kind.missing_capability(request, caps)
        if gap:
            merge(missing, gap)
    if missing:
        raise missing_capability(missing)


def check_requests(requests: Mapping[str, Any]) -> list[Any]:
    """A handler's questions must be well formed: a bad one is the server's bug (-32603).

    Returns the kind of each request, in order. Most tools ask the same few questions on every
    call, so a question validated before (the same canonical encoding) is not validated again:
    the check is a pure function of what the question says (`rondo.mrtr.questions`).
    """
    question, kind_for, _ = _loaded or _load()
    return [_checked(question, kind_for, key, request) for key, request in requests.items()]


def _checked(question: Any, kind_for: Any, key: Any, request: Any, facts: Any = None) -> Any:
    """The kind of one well-formed question (validated once per distinct question); `facts`
    are its `questions.Question` when already known this round."""
    if not isinstance(key, str) or not key:
        raise internal_error("input request keys must be non-empty strings")
    if facts is None:
        try:
            facts = question(request)
        except Exception:
            facts = None  # not an input request, or not JSON: validation says why
    if facts is not None and facts.checked:
        return facts.kind
    try:
        kind = facts.kind if facts is not None else kind_for(request)
        kind.validate_request(request)
    except ValueError as exc:
        raise internal_error(f"input request {key!r} is invalid: {exc}") from None
    if facts is not None:
        facts.checked = True
    return kind
