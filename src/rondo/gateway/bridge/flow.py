"""One bridged upstream call: a 2025-11-25 upstream's `tools/call` (`prompts/get`,
`resources/read`) running in a task, and the questions it sends back mid-call
(`elicitation/create`, `sampling/createMessage`, `roots/list`) queued as events for the relay.

A question is turned into a 2026-07-28 input request (the upstream's `elicitationId` and
`_meta` dropped) under a key: the one the upstream named in `_meta["dev.rondo/inputKey"]` (a
rondo upstream does), else `<kind>-<n>`. It is answered, in this order, from `answers` (what
earlier rounds answered, matched by the question's content and how often it was asked: replay),
from `offered` (answers the client sent before being asked, under that key), or by the client
in a later round (the relay resolves `Question.future`).
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import re
from collections.abc import Coroutine, Mapping
from typing import Any

import msgspec

from ...client.loop import Unanswerable
from ...kinds import kind_for
from ...wire.errors import invalid_params
from ...wire.meta import INPUT_KEY

# The flow whose upstream call is running in this context: an HTTP upstream's back-channel
# request is read (and answered) in the context of the call it belongs to.
CURRENT: contextvars.ContextVar[Flow | None] = contextvars.ContextVar(
    "rondo_bridge_flow", default=None)
_KEY = re.compile(r"^[A-Za-z0-9_.:/-]{1,64}$")
# After a question arrives, how long a further question sent with it (an `ask_all`) is awaited
# to join the same round; one that comes later goes in the next round, which is still correct.
SETTLE = 0.02


class Question:
    """One upstream question waiting for the client's answer."""

    __slots__ = ("fingerprint", "future", "key", "request")

    def __init__(self, key: str, request: dict[str, Any], fingerprint: str) -> None:
        self.key = key
        self.request = request
        self.fingerprint = fingerprint
        self.future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()


# What a form elicitation's `requestedSchema` holds (spec: "a restricted subset of JSON
# Schema"); upstreams built on Pydantic add the model's `title`, which rondo's request checks
# (and strict clients) refuse, so the bridge keeps only these when it passes a question on.
_SCHEMA_KEYS = ("$schema", "type", "properties", "required")


def downstream_request(method: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The 2026-07-28 input request for a legacy question: no `elicitationId`, no `_meta`, and
    a form's `requestedSchema` cut to the keys the spec lists for it."""
    kept = {k: v for k, v in params.items() if k not in ("_meta", "elicitationId")}
    schema = kept.get("requestedSchema")
    if method == "elicitation/create" and isinstance(schema, Mapping):
        kept["requestedSchema"] = {k: v for k, v in schema.items() if k in _SCHEMA_KEYS}
    return {"method": method, "params": kept}


def fingerprint(request: Mapping[str, Any]) -> str:
    """What a question says (its method and params), as a short digest."""
    return hashlib.sha256(msgspec.json.encode(request, order="sorted")).hexdigest()[:32]


def checked_answer(key: str, request: Mapping[str, Any], value: Any) -> dict[str, Any]:
    """The client's answer to `request`, as sent upstream; a malformed one is -32602."""
    try:
        kind_for(request).read_answer(request, value)
    except (ValueError, TypeError) as exc:
        raise invalid_params(f"Invalid input response for '{key}': {exc}") from None
    if not isinstance(value, dict):
        raise invalid_params(f"Invalid input response for '{key}': not an object")
    return value


class Flow:
    """The upstream call of one bridged request and what it asked."""

    def __init__(self, *, answers: dict[str, list[Any]] | None = None,
                 offered: Mapping[str, Any] | None = None) -> None:
        self.events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self.answers: dict[str, list[Any]] = answers if answers is not None else {}
        self.offered = dict(offered or {})
        self.seen: dict[str, int] = {}
        self.open: dict[str, Question] = {}  # asked and not answered yet, by key
        self.asked = 0
        self.task: asyncio.Task[None] | None = None
        self.ctx: Any = None  # the downstream request of the current round
        self.round = 0
        self.busy = False
        self.closed = False
        self.expiry: asyncio.TimerHandle | None = None

    def start(self, call: Coroutine[Any, Any, Any]) -> None:
        token = CURRENT.set(self)
        try:
            self.task = asyncio.create_task(self._run(call))
        finally:
            CURRENT.reset(token)

    async def _run(self, call: Coroutine[Any, Any, Any]) -> None:
        try:
            result = await call
        except Exception as exc:
            self.events.put_nowait(("error", exc))
        else:
            self.events.put_nowait(("done", result))

    async def ask(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """The answer to one upstream question (called from the upstream session's handler)."""
        if self.closed:  # a question sent after its call ended: nobody will answer it
            raise Unanswerable("the relayed call has ended")
        request = downstream_request(method, params)
        try:
            kind_for(request).validate_request(request)
        except ValueError as exc:
            raise Unanswerable(f"malformed {method}: {exc}") from None
        digest = fingerprint(request)
        seen = self.seen.get(digest, 0)
        self.seen[digest] = seen + 1
        known = self.answers.get(digest, [])
        if seen < len(known):
            return dict(known[seen])  # replay: asked before, answered in an earlier round
        meta = params.get("_meta")
        hint = meta.get(INPUT_KEY) if isinstance(meta, Mapping) else None
        key = self._key(hint, method)
        if hint == key and key in self.offered:
            offer = self.offered.pop(key)
            try:
                value = checked_answer(key, request, offer)
            except Exception:
                pass  # an unusable answer sent unasked: ask the question instead
            else:
                self.answers.setdefault(digest, []).append(value)
                return value
        question = Question(key, request, digest)
        self.open[key] = question
        self.events.put_nowait(("ask", question))
        try:
            return await question.future
        except asyncio.CancelledError:
            if not self.closed:  # the upstream gave up on it (its notifications/cancelled)
                question.future.cancel()
                self.withdrawn(question)
            raise
        finally:
            if self.open.get(key) is question:
                del self.open[key]

    def withdrawn(self, question: Question) -> None:
        """The upstream cancelled `question`: not asked in a round still to come; a 2025-11-25
        client being asked it over its session is told (`notifications/cancelled` for the
        proxy's request) and its round goes on without it. A 2026-07-28 client already holding
        it in a round sends its answer with the retry, which is then not passed on."""
        from ...legacy.sessions import LegacyCall

        call = getattr(self.ctx, "_session", None)
        if isinstance(call, LegacyCall):
            call.withdraw(question.key)

    def _key(self, hint: Any, method: str) -> str:
        if isinstance(hint, str) and _KEY.match(hint) and hint not in self.open:
            return hint
        while True:
            self.asked += 1
            key = f"{method.split('/')[0]}-{self.asked}"
            if key not in self.open:
                return key

    def unanswered(self, asked: list[Question]) -> list[Question]:
        return [q for q in asked if not q.future.done()]

    def close(self) -> None:
        """End the upstream call (the upstream is told) and drop what it still asks."""
        self.closed = True
        if self.expiry is not None:
            self.expiry.cancel()
            self.expiry = None
        if self.task is not None and not self.task.done():
            self.task.cancel()
        for question in list(self.open.values()):
            question.future.cancel()  # no answer goes up: the call's cancellation says it all
        self.open.clear()


class RoundLog:
    """Stands for the round's `Context` where the proxy passes on an upstream log message."""

    __slots__ = ("flow",)

    def __init__(self, flow: Flow) -> None:
        self.flow = flow

    def log(self, level: str, data: Any, logger: str | None = None) -> None:
        ctx = self.flow.ctx
        if ctx is not None and not self.flow.closed:
            ctx.log(level, data, logger)


async def next_round(flow: Flow, timeout: float, carried: list[Question]) -> tuple[str, Any]:
    """What the upstream does next: `("done", result)`, `("error", exc)` or `("ask",
    [questions])`. Questions still unanswered (`carried`) are asked again at once, with any
    already queued; otherwise the upstream has `timeout` seconds to ask or answer."""
    asked = list(carried)
    if not asked:
        try:
            async with asyncio.timeout(timeout):
                kind, value = await flow.events.get()
        except TimeoutError:
            return "timeout", None
        if kind != "ask":
            return kind, value
        asked.append(value)
        while True:
            try:
                async with asyncio.timeout(SETTLE):
                    kind, value = await flow.events.get()
            except TimeoutError:
                break
            if kind != "ask":
                flow.events.put_nowait((kind, value))  # seen after this round's answers
                break
            asked.append(value)
    else:
        while not flow.events.empty():
            kind, value = flow.events.get_nowait()
            if kind != "ask":
                flow.events.put_nowait((kind, value))
                break
            asked.append(value)
    return "ask", asked
