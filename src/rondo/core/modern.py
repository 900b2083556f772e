"""The 2026-07-28 dialect: contexts from `_meta`, `resultType` on every result, and `ctx.ask`
as a Multi Round-Trip interrupt that ends the round with a sealed `input_required`.

A dialect is the few things an era decides; the core asks the request's dialect instead of
testing which era it is. The legacy one (`legacy.py`) has the same members.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..mrtr.admission import admit
from ..mrtr.ask import ask_by_interrupt, envelope_for
from ..mrtr.ask import not_awaited as _not_awaited_error
from ..mrtr.result import AskInterrupt, InputRequired
from ..server.context import Context
from ..wire.era import MODERN as MODERN_ERA
from ..wire.errors import internal_error
from ..wire.meta import SERVER_INFO

if TYPE_CHECKING:
    from ..server.request import Request
    from .core import Core


class ModernDialect:
    """What the 2026-07-28 wire allows, for one server."""

    era = MODERN_ERA

    def __init__(self, core: Core | None = None) -> None:
        server = core.server if core is not None else None
        self._result_meta = (
            {SERVER_INFO: server.info} if server is not None and server.server_info_in_results
            else None
        )

    def context(self, core: Core, req: Request) -> Context:
        return Context.for_request(core.server, req, self)

    def finish(self, req: Request, result: dict[str, Any]) -> dict[str, Any]:
        if "resultType" not in result:
            result["resultType"] = "complete"
        if self._result_meta is not None and "_meta" not in result:
            result["_meta"] = self._result_meta
        return result

    # `ctx.ask` calls `dialect.ask(ctx, requests, single)`: here that is `ask_by_interrupt`
    # itself, with no method frame in between.
    ask = staticmethod(ask_by_interrupt)

    def run(self, ctx: Context, fn: Callable[..., Any], sig: Any, kwargs: dict[str, Any]) -> Any:
        """Call a component, turning a `ctx.ask` interrupt into an InputRequired outcome.

        Returns `run_component`'s coroutine itself: no extra frame on the hot path."""
        return run_component(ctx, fn, sig, kwargs)

    def input_required(self, ctx: Context, outcome: InputRequired) -> dict[str, Any]:
        """Admit an input_required outcome and encode it, sealing the state for the next round."""
        requests, token = seal_outcome(ctx, outcome)
        admit(ctx, requests, token is not None)
        return input_required_result(requests, token)

    async def settle(self, core: Core, req: Request, result: dict[str, Any], again: Any) -> dict[str, Any]:
        """An input_required result goes to the client as it is: it retries over the wire."""
        return result


def seal_outcome(ctx: Context, outcome: InputRequired) -> tuple[dict[str, Any], str | None]:
    """The round's questions (explicit and `ctx.ask` ones) and the sealed state for the next."""
    book = ctx._mrtr
    explicit = outcome.input_requests
    if book is None or not book.pending:
        requests = dict(explicit)
    elif not explicit:
        requests = dict(book.pending)  # only `ctx.ask` questions: the common case
    else:
        requests = dict(explicit)
        for key, request in book.pending.items():
            requests.setdefault(key, request)
    policy = ctx.server.state_policy
    token: str | None
    if policy is None:
        if outcome.state is not None and not isinstance(outcome.state, str):
            raise internal_error("with state=None, InputRequired.state must be a string")
        if book is not None and book.answers:
            raise internal_error("ctx.ask needs a StatePolicy to carry answers between rounds")
        token = outcome.state
    else:
        env = envelope_for(ctx, outcome.state, requests)
        token = None if env is None else policy.seal_for(ctx, env)
    return requests, token


def input_required_result(requests: dict[str, Any], token: str | None) -> dict[str, Any]:
    result: dict[str, Any] = {"resultType": "input_required"}
    if requests:
        result["inputRequests"] = requests
    if token is not None:
        result["requestState"] = token
    return result


async def run_component(ctx: Context, fn: Callable[..., Any], sig: Any, kwargs: dict[str, Any]) -> Any:
    """Call a component's function with its context; a `ctx.ask` interrupt becomes InputRequired."""
    if sig.context_param is not None:
        kwargs[sig.context_param] = ctx
    try:
        if sig.is_async:
            value = await fn(**kwargs)
            if ctx._mrtr is not None and ctx._mrtr.waiting:
                raise _not_awaited(ctx)  # ctx.ask(...) without await: refused before asking
            return value
        ctx.runs_inline()
        if sig.threaded:
            return await _in_thread(ctx, fn, kwargs)
        return fn(**kwargs)
    except AskInterrupt:
        return InputRequired()


async def _in_thread(ctx: Context, fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """Run a blocking handler in a worker thread; its notifications hop back to the loop."""
    import asyncio

    loop = asyncio.get_running_loop()
    emit = ctx._emit
    hop = None
    if emit is not None:

        def hop(note: dict[str, Any]) -> None:
            loop.call_soon_threadsafe(emit, note)

    ctx.runs_inline(loop, hop)
    return await asyncio.to_thread(fn, **kwargs)


def _not_awaited(ctx: Context) -> BaseException:
    error = _not_awaited_error(ctx)
    assert error is not None
    return error


# For a Context built by hand (tests, tools called directly): `ctx.ask` behaves as on 2026-07-28.
MODERN = ModernDialect()
