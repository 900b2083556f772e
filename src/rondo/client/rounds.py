"""How a call that may answer `input_required` (`tools/call`, `prompts/get`, `resources/read`)
ends: paused as a `PendingCall` for the caller (`manual=True`), or driven through its rounds by
the handlers (`client/loop.py`), a result type an extension handles taken to its end by it, and
the final result typed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from rondo.client.errors import InputRequiredError
from rondo.client.loop import INPUT_REQUIRED, drive, read_interim, result_type
from rondo.client.transports import Json
from rondo.client.types import (
    CallToolResult,
    GetPromptResult,
    PendingCall,
    ReadResourceResult,
    convert,
)

if TYPE_CHECKING:
    from .session import Client

RESULT_TYPES: dict[str, type[Any]] = {"tools/call": CallToolResult, "prompts/get": GetPromptResult,
                                      "resources/read": ReadResourceResult}
Send = Callable[[Json], Awaitable[Json]]


async def finish(client: Client, method: str, params: Json, result: Json, rounds: int, manual: bool,
                 send: Send, *, raw: bool = False) -> Any:
    """The call's typed result (or its `PendingCall` under `manual`), from its latest answer;
    with `raw` the final result dict as sent instead of its typed view."""
    result = await extended(client, method, params, result)
    if manual:
        if result_type(result) != INPUT_REQUIRED:
            return result if raw else convert(result, RESULT_TYPES[method], f"{method} result")
        try:
            requests, state = read_interim(result)
        except ValueError as exc:
            raise InputRequiredError("malformed", f"server sent a malformed input_required result: {exc}",
                                     last_result=result, rounds=rounds) from None
        return PendingCall(method=method, params=params, input_requests=requests,
                           request_state=state, rounds=rounds)
    final = await drive(send, params, answer=client.handlers.answer_all, max_rounds=client.max_rounds,
                        max_input_requests=client.max_input_requests, deadline=client.deadline,
                        result=result, rounds=rounds)
    final = await extended(client, method, params, final)
    return final if raw else convert(final, RESULT_TYPES[method], f"{method} result")


async def extended(client: Client, method: str, params: Json, result: Json) -> Json:
    """A result type an extension handles (e.g. a task) is taken to its end by it."""
    handle = client.result_types.get(result_type(result))
    return result if handle is None else await handle(client, method, params, result)
