"""`ctx.ask` on the 2025-11-25 era: real server-to-client requests over the session.

The modern wire ends the round with input_required; a handshake-era client instead expects
`elicitation/create`, `sampling/createMessage` or `roots/list` as JSON-RPC requests on the
originating request's stream, and answers each with a response. The handler gets the same value
types either way (`ElicitResult`, `SamplingResult`, a list of `Root`).
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Mapping
from typing import Any

from ..mrtr.ask import Awaitable
from ..wire.errors import invalid_params


class AskError(RuntimeError):
    """A `ctx.ask` on a legacy session that could not be answered.

    Uncaught in a tool, it becomes a tool error result (`isError: true`) carrying this message.
    """

    public = True  # its message is for the model (core/methods.py's tool_failure)


class ClientCannotAnswer(AskError):
    """The client did not declare the capability the question needs (at `initialize`)."""

    def __init__(self, message: str, missing: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.missing = missing or {}


class AskTimeout(AskError, TimeoutError):
    """The client did not answer within the configured `ask_timeout`."""


class AskRejected(AskError):
    """The client answered the question with a JSON-RPC error."""

    def __init__(self, key: str, error: dict[str, Any]) -> None:
        super().__init__(f"The client refused input request {key!r}: {error.get('message', 'error')}")
        self.error = error


class Withdrawn(Exception):
    """The question was withdrawn by whoever asked it (`LegacyCall.withdraw`): not answered."""


def ask_back_channel(ctx: Any, requests: Mapping[str, Mapping[str, Any]], *, single: str | None) -> Any:
    """Engine of `ctx.ask`/`ctx.ask_all` on a legacy session: awaitable, or blocking in a sync handler.

    Answers an earlier in-process round already has (carried in the sealed state, see
    `legacy_rounds.py`) are used as they are; only the rest go over the back-channel.
    """
    from ..mrtr.ask import answer_now, book_of
    from .sessions import LegacyCall

    call = ctx._session
    if not isinstance(call, LegacyCall):
        raise RuntimeError("ctx.ask on the legacy era needs a live session")
    found, missing = answer_now(ctx, requests)
    if not missing:
        value = found[single] if single is not None else found
        return value if ctx._sync else _ready(value)
    wire = _prepare(call, missing, ctx.request_id)
    coro = _ask(call, missing, wire, book_of(ctx).answers, found, single)
    if not ctx._sync:
        return Awaitable("ask" if single is not None else "ask_all", coro=coro, book=book_of(ctx))
    loop = ctx._loop or call.loop
    if threading.get_ident() == call.thread:
        coro.close()
        raise RuntimeError("a sync handler on the legacy era must run in a worker thread to ask")
    return asyncio.run_coroutine_threadsafe(coro, loop).result()


async def _ready(value: Any) -> Any:
    return value


async def collect(call: Any, requests: Mapping[str, Mapping[str, Any]], request_id: Any) -> dict[str, Any]:
    """Send `requests` over the back-channel and return the client's raw answers by key
    (what a 2026-07-28 client would put in `inputResponses`)."""
    wire = _prepare(call, requests, request_id)
    return await _send(call, requests, wire)


def elicitation_id(session: Any, request_id: Any, key: str) -> str:
    """The `elicitationId` of the URL question `key` of one request: derived, not stored, so
    `ctx.url_complete(key)` finds it in any round of the request."""
    seed = f"{session.id}\x00{request_id!r}\x00{key}".encode()
    return hashlib.sha256(seed).hexdigest()[:32]


def elicitation_complete(ctx: Any, call: Any, key: str) -> None:
    """Send `notifications/elicitation/complete` for the URL question `key` of this request."""
    from .sessions import LegacyCall

    if not isinstance(call, LegacyCall) or call.session.version < "2025-11-25":
        return
    note = {"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
            "params": {"elicitationId": elicitation_id(call.session, ctx.request_id, key)}}
    call.emit(note)


def _prepare(call: Any, requests: Mapping[str, Mapping[str, Any]], request_id: Any) -> dict[str, dict[str, Any]]:
    """Check each question (handler bugs are -32603) and what the client can answer; build the wire form."""
    from ..kinds import missing_capabilities
    from ..mrtr.admission import check_requests

    session = call.session
    check_requests(requests)
    missing = missing_capabilities(requests, session.capabilities)
    if missing:
        raise ClientCannotAnswer(
            f"The client cannot answer this: it did not declare the capability {missing} "
            "when it connected",
            missing,
        )
    return {key: _wire_params(session, request, elicitation_id(session, request_id, key), key)
            for key, request in requests.items()}


def _wire_params(session: Any, request: Mapping[str, Any], url_id: str, key: str) -> dict[str, Any]:
    from ..wire.meta import INPUT_KEY

    version = session.version
    params = dict(request.get("params") or {})
    # The key the handler asked under, in `_meta` (which every request may carry): a plain
    # client ignores it; a bridge to 2026-07-28 (`rondo proxy --bridge`) keeps it as the key.
    meta = params.get("_meta")
    params["_meta"] = {**(meta if isinstance(meta, Mapping) else {}), INPUT_KEY: key}
    if request.get("method") == "elicitation/create":
        mode = params.get("mode", "form")
        if mode == "url":
            if version < "2025-11-25":
                raise ClientCannotAnswer(
                    f"URL elicitation needs protocol 2025-11-25; this session speaks {version}"
                )
            params["elicitationId"] = url_id
        elif version < "2025-11-25":
            params.pop("mode", None)  # form mode was implicit before 2025-11-25
    return params


async def _ask(call: Any, requests: Mapping[str, Mapping[str, Any]], wire: dict[str, dict[str, Any]],
               book: dict[str, Any], found: dict[str, Any], single: str | None) -> Any:
    from ..kinds import kind_for
    from ..mrtr.ask import digest

    raw = await _send(call, requests, wire)
    answers = dict(found)
    for key, value in raw.items():
        try:
            answers[key] = kind_for(requests[key]).read_answer(requests[key], value)
        except ValueError as err:
            raise invalid_params(f"Invalid input response for '{key}': {err}") from None
        # Recorded like an answer from a retry, so a later in-process round carries it.
        book[key] = [digest(requests[key]), value]
    return answers[single] if single is not None else answers


async def _send(call: Any, requests: Mapping[str, Mapping[str, Any]],
                wire: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Send every question, wait for every answer (bounded by `ask_timeout`); raw answers by key."""
    from .sessions import ClientRefused

    session = call.session
    timeout = session.ask_timeout
    sent: dict[str, tuple[int, asyncio.Future[Any]]] = {}
    if call.asks is None:
        call.asks = set()
    if call.asking is None:
        call.asking = {}
    try:
        for key, request in requests.items():
            rid, fut = session.request(request["method"], wire[key], call.send)
            sent[key] = (rid, fut)
            call.asks.add(fut)
            call.asking[key] = fut
        futures = [fut for _, fut in sent.values()]
        try:
            async with asyncio.timeout(timeout):
                await asyncio.wait(futures)
        except TimeoutError:
            raise AskTimeout(f"The client did not answer within {timeout:g} s") from None
        raw: dict[str, Any] = {}
        for key, (_, fut) in sent.items():
            if fut.cancelled():
                raise asyncio.CancelledError
            exc = fut.exception()
            if isinstance(exc, Withdrawn):
                continue  # no longer needed: the round goes on without it
            if isinstance(exc, ClientRefused):
                raise AskRejected(key, exc.error)
            raw[key] = fut.result()
        return raw
    finally:
        for key, (rid, fut) in sent.items():
            call.asks.discard(fut)
            if call.asking.get(key) is fut:
                del call.asking[key]
            if fut.done() and not fut.cancelled() and not isinstance(fut.exception(), Withdrawn):
                continue  # answered
            fut.cancel()
            session.forget(rid)
            if not session.closed:
                # Tell the client to stop asking its user: nobody waits for the answer now.
                call.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                           "params": {"requestId": rid, "reason": "no longer needed"}})


__all__ = [
    "AskError", "AskRejected", "AskTimeout", "ClientCannotAnswer", "Withdrawn", "ask_back_channel",
    "collect", "elicitation_complete",
]
