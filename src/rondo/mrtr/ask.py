"""Bookkeeping behind `ctx.ask`: which questions are answered, in this round or an earlier one.

Answers from earlier rounds travel inside the sealed request state, each pinned to a digest of
the question it answers, so a question reworded between rounds is asked again instead of being
answered by a stale answer. Nothing is kept in the server between rounds.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

import msgspec

from ..wire.errors import internal_error, invalid_params, state_rejected
from .result import AskInterrupt

# Keys of the framework's envelope inside the sealed state.
USER = "u"
ANSWERS = "a"
ASKED = "q"
# The MRTR flow's id and first round's span (tracing only): every round's span links to it.
FLOW = "f"


_questions: Any = None  # the `questions` module, once a first question was asked


def _load_questions() -> Any:
    # With the first question asked, once: start-up skips the module (and the kinds and the
    # hashlib it needs), and no call after the first pays for an import statement.
    global _questions
    from . import questions

    _questions = questions
    return questions


def digest(request: Mapping[str, Any]) -> str:
    """Base64url of the first 12 bytes of SHA-256 over the canonical question (16 characters)."""
    questions = _questions or _load_questions()
    text: str = questions.digest_of_encoding(msgspec.json.encode(request, order="sorted"))
    return text


class AskBook:
    """Per-request record of answers (carried and new) and of the questions still open."""

    __slots__ = ("carried", "asked", "answers", "pending", "sealed", "digests", "waiting")

    def __init__(
        self,
        carried: Mapping[str, Any] | None,
        asked: Mapping[str, Any] | None,
        *,
        sealed: bool = False,
    ) -> None:
        # None on every first round: no call for that.
        self.carried: dict[str, Any] = {} if carried is None else _owned(carried)
        self.asked: dict[str, Any] = {} if asked is None else _owned(asked)
        # True when this round came with our sealed state: then only answers to the questions
        # that state says were asked count, and carried answers cannot be overridden.
        self.sealed = sealed
        self.answers: dict[str, list[Any]] = {}  # key -> [digest, raw answer]
        self.pending: dict[str, Any] = {}
        # key -> (question, its facts: kind, digest, checked) for the questions asked this
        # round; the sealing and the admission of this round read them instead of again
        self.digests: dict[str, tuple[Any, Any]] = {}
        # `ctx.ask(...)` awaitables of an `async def` handler that would ask when awaited and
        # were not awaited yet (None until one is made)
        self.waiting: list[Awaitable] | None = None


def _owned(value: Any) -> dict[str, Any]:
    # None on every first round; a freshly decoded dict on a retry, which nothing else holds
    # and the book only reads: kept as it is, not copied.
    if value is None:
        return {}
    if type(value) is dict:
        return value
    if isinstance(value, Mapping):
        return dict(value)
    return {}


def book_of(ctx: Any) -> AskBook:
    book: AskBook | None = ctx._mrtr
    if book is None:
        book = ctx.keep_book(AskBook(None, None))
    return book


def _read(kind: Any, key: str, request: Mapping[str, Any], raw: Any) -> Any:
    try:
        return kind.read_answer(request, raw)
    except ValueError as exc:
        raise invalid_params(f"Invalid input response for '{key}': {exc}") from None


def answer_now(ctx: Any, requests: Mapping[str, Mapping[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split `requests` into (answers found, requests still missing) without ending the round."""
    questions = _questions or _load_questions()
    question = questions.question
    book: AskBook | None = ctx._mrtr
    if book is None:
        book = ctx.keep_book(AskBook(None, None))
    responses = ctx.input_responses
    found: dict[str, Any] = {}
    missing: dict[str, Any] = {}
    for key, request in requests.items():
        try:
            facts = question(request)
        except questions.NotAQuestion as exc:  # the handler's bug
            raise internal_error(f"ctx.ask({key!r}): {exc}") from None
        d = facts.digest
        book.digests[key] = (request, facts)
        if key in responses and (book.asked.get(key) == d if book.sealed else True):
            raw = responses[key]
            found[key] = _read(facts.kind, key, request, raw)
            book.answers[key] = [d, raw]
            continue
        carried = book.carried.get(key)
        if type(carried) is list and len(carried) == 2 and carried[0] == d:
            found[key] = _read(facts.kind, key, request, carried[1])
            book.answers[key] = carried
            continue
        missing[key] = request
    return found, missing


NOT_AWAITED = (
    "ctx.{what}(...) was not awaited: in an `async def` handler write "
    "`answer = await ctx.{what}(...)` (in a plain `def` handler, call it without `await`)"
)


class NotAwaited(TypeError):
    """A forgotten `await` on `ctx.ask`. Its text is rondo's own and names the fix, so a masked
    server still shows it (`public`)."""

    public = True


class Awaitable:
    """What `ctx.ask` returns in an `async def` handler: await it for the answer. Using it as
    the answer instead (a forgotten `await`) fails at once, naming the fix, instead of with an
    AttributeError on some internal object after the user has answered.

    When the answer is missing, awaiting it ends the round (`missing`): so a forgotten
    `await` is found in the first round, before anyone is asked (`run_component` refuses a
    handler that returns with a question neither awaited nor answered)."""

    __slots__ = ("_coro", "_value", "_what", "_missing", "_book")

    def __init__(self, what: str, *, value: Any = None, coro: Any = None,
                 missing: dict[str, Any] | None = None, book: AskBook | None = None) -> None:
        self._what = what
        self._value = value  # the answer, when a round already supplied it
        self._coro = coro  # or the coroutine that gets it (the legacy back-channel)
        self._missing = missing  # or the questions whose answers this round lacks
        self._book = book  # where it waits to be awaited (it would ask someone)
        if book is not None:
            if book.waiting is None:
                book.waiting = []
            book.waiting.append(self)

    def __await__(self) -> Generator[Any, None, Any]:
        book = self._book
        if book is not None and book.waiting is not None and self in book.waiting:
            book.waiting.remove(self)
        if self._missing is not None:
            raise AskInterrupt(self._missing)
        if self._coro is not None:
            return (yield from self._coro.__await__())
        return self._value

    def _misused(self, *_: Any) -> Any:
        self.forget()
        raise NotAwaited(NOT_AWAITED.format(what=self._what))

    def forget(self) -> None:
        """Never to be awaited: leave the book, close the coroutine (no "never awaited"
        warning on top of rondo's own error)."""
        book = self._book
        if book is not None and book.waiting is not None and self in book.waiting:
            book.waiting.remove(self)
        if self._coro is not None:
            self._coro.close()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._misused()

    __getitem__ = __iter__ = __bool__ = __contains__ = __len__ = _misused

    def __repr__(self) -> str:
        return f"<ctx.{self._what}(...) awaitable: await it for the answer>"


def ask_by_interrupt(ctx: Any, requests: Mapping[str, Mapping[str, Any]], single: str | None) -> Any:
    """`ctx.ask` on the 2026-07-28 wire: the answer if a round supplied it, else end the round.

    The dialect calls this (see `rondo.core.modern`); a missing answer raises AskInterrupt,
    which the core turns into input_required.
    """
    found, missing = answer_now(ctx, requests)
    what = "ask" if single is not None else "ask_all"
    if missing:
        ctx._mrtr.pending.update(missing)  # answer_now made the book
        if ctx._sync:
            raise AskInterrupt(missing)
        return Awaitable(what, missing=missing, book=ctx._mrtr)  # awaiting it ends the round
    value = found[single] if single is not None else found
    return value if ctx._sync else Awaitable(what, value=value)


def not_awaited(ctx: Any) -> NotAwaited | None:
    """After an `async def` handler returned: the error for a question it asked without
    awaiting it (awaited, it would have asked someone), found before anyone is asked."""
    book: AskBook | None = ctx._mrtr
    if book is None or not book.waiting:
        return None
    first = book.waiting[0]
    for waiting in list(book.waiting):
        waiting.forget()
    return NotAwaited(NOT_AWAITED.format(what=first._what))


def envelope_for(ctx: Any, user_state: Any, asked: Mapping[str, Any]) -> dict[str, Any] | None:
    """The framework's state envelope for the next round, or None when nothing needs carrying."""
    book: AskBook | None = ctx._mrtr
    env: dict[str, Any] = {}
    if user_state is not None:
        env[USER] = user_state
    if book is not None and book.answers:
        env[ANSWERS] = book.answers
    if asked:
        known = book.digests if book is not None else {}
        digests: dict[str, str] = {}
        for key, req in asked.items():
            # The digest `answer_now` took of this very question, or a fresh one (an
            # explicit request).
            seen = known.get(key)
            digests[key] = seen[1].digest if seen is not None and seen[0] is req else digest(req)
        env[ASKED] = digests
    flow = ctx._flow
    if flow is not None and env:
        env[FLOW] = flow
    return env or None


def load_envelope(ctx: Any, opened: Any) -> None:
    """Install a verified envelope on the context: user state and carried answers."""
    if type(opened) is not dict:
        raise state_rejected()
    get = opened.get
    ctx.state = get(USER)
    ctx.continue_flow(get(FLOW))
    ctx.keep_book(AskBook(get(ANSWERS), get(ASKED), sealed=True))


def pick_supported(
    ctx: Any, request: Mapping[str, Any], fallback: Any
) -> tuple[Mapping[str, Any] | None, dict[str, Any]]:
    """The first of `request` and its fallbacks the client declared what it needs for.

    Returns `(chosen, {})`, or `(None, merged missing capabilities of the first choice)` when
    none fits. Read from the request's own declaration, so every round chooses the same one.
    """
    from ..kinds import kind_for, missing_capabilities

    if fallback is None:
        options: list[Mapping[str, Any]] = [request]
    elif isinstance(fallback, Mapping):
        options = [request, fallback]
    else:
        options = [request, *fallback]
    caps = ctx.client_capabilities
    first: dict[str, Any] | None = None
    for option in options:
        try:
            kind_for(option)
        except ValueError as exc:
            raise internal_error(f"ctx.ask fallback: {exc}") from None
        missing = missing_capabilities({"": option}, caps)
        if not missing:
            return option, {}
        if first is None:
            first = missing
    return None, first or {}
