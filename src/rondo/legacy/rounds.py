"""Explicit `InputRequired` on a 2025-11-25 session: the server plays the retrying client.

A handshake-era client cannot retry with `inputResponses`, but it can answer server-to-client
requests. So when a handler returns `InputRequired` on a legacy session whose client declared
what it asks, the questions go over the back-channel (as `ctx.ask` does there) and the request
runs again in-process with the answers and the newly sealed state, through the same middleware,
state boundary and handler as a 2026-07-28 retry would. A state-only round runs again after a
short pause. Only a client that cannot answer (capability not declared, no back-channel) gets the
seeds' rule: -32603 naming 2026-07-28.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..core.modern import input_required_result, seal_outcome
from ..wire.errors import MISSING_CAPABILITY, McpError, internal_error

if TYPE_CHECKING:
    from ..mrtr.result import InputRequired
    from ..server.context import Context
    from ..server.request import Request

NEEDS_MODERN = "This request needs input from the client, which requires protocol version 2026-07-28"
MAX_ROUNDS = 16
# Pacing of state-only rounds, as the client's MRTR loop paces them (client/loop.py).
FIRST_PAUSE = 0.05
MAX_PAUSE = 0.25
_RETRY_KEYS = ("inputResponses", "requestState")


def admit_legacy(ctx: Context, outcome: InputRequired) -> dict[str, Any]:
    """Seal and check an input_required outcome of a legacy request, as the modern dialect does;
    a question the session's client cannot answer is -32603 naming 2026-07-28."""
    from ..mrtr.admission import admit
    from .sessions import LegacyCall

    requests, token = seal_outcome(ctx, outcome)
    try:
        admit(ctx, requests, token is not None)
    except McpError as exc:
        if exc.code == MISSING_CAPABILITY:
            raise internal_error(NEEDS_MODERN) from None
        raise
    if not isinstance(ctx._session, LegacyCall):
        raise internal_error(NEEDS_MODERN)
    return input_required_result(requests, token)


async def settle(
    req: Request, result: dict[str, Any], again: Callable[[Request], Awaitable[dict[str, Any]]]
) -> dict[str, Any]:
    """Answer input_required results in-process until the request completes (bounded)."""
    from .ask import AskError, collect
    from .sessions import LegacyCall

    rounds = 0
    pause = 0.0
    while result.get("resultType") == "input_required":
        rounds += 1
        if rounds > MAX_ROUNDS:
            raise internal_error(f"{req.method} did not complete within {MAX_ROUNDS} rounds")
        call = req.call
        if not isinstance(call, LegacyCall):
            raise internal_error(NEEDS_MODERN)
        requests = result.get("inputRequests") or {}
        params = {k: v for k, v in req.params.items() if k not in _RETRY_KEYS}
        if requests:
            pause = 0.0
            try:
                params["inputResponses"] = await collect(call, requests, req.id)
            except AskError as exc:
                return _refusal(req, exc)
        else:
            pause = FIRST_PAUSE if not pause else min(pause * 2, MAX_PAUSE)
            await asyncio.sleep(pause)
        token = result.get("requestState")
        if token is not None:
            params["requestState"] = token
        req = req.again(params)
        result = await again(req)
    return result


def _refusal(req: Request, exc: Exception) -> dict[str, Any]:
    """A client that cannot answer gets -32603 naming 2026-07-28; one that refused or timed out
    gets a tool error for a tool (as an uncaught `ctx.ask` failure would), -32603 otherwise."""
    from .ask import ClientCannotAnswer

    if isinstance(exc, ClientCannotAnswer):
        raise internal_error(NEEDS_MODERN) from None
    if req.method == "tools/call":
        return {"content": [{"type": "text", "text": str(exc)}], "isError": True}
    raise internal_error(str(exc)) from None
