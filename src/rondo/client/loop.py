"""The input_required driver: a small pure function with the transport call injected.

`drive` sends a request, and while the server answers `input_required` it gathers answers
(`answer` maps each input request key to a response), then retries the same params with
`inputResponses` and the byte-identical `requestState`. Bounds: a round cap, an optional
wall-clock deadline for the whole exchange, and paced state-only rounds (50 ms doubling to
250 ms). Every failure is one exception type, `InputRequiredError`, carrying the last result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from rondo.client.errors import InputRequiredError
from rondo.client.limits import DEFAULT_MAX_INPUT_REQUESTS

Json = dict[str, Any]
Send = Callable[[Json], Awaitable[Json]]
Answer = Callable[[dict[str, Json]], Awaitable[dict[str, Json]]]

DEFAULT_MAX_ROUNDS = 10
STATE_ONLY_FIRST_PAUSE = 0.05
STATE_ONLY_MAX_PAUSE = 0.25
COMPLETE = "complete"
INPUT_REQUIRED = "input_required"


class Unanswerable(Exception):
    """Raised by an `answer` function for an input request it cannot or must not answer."""


class NoHandler(Unanswerable):
    """No installed handler takes this kind of input request."""


def result_type(result: Mapping[str, Any]) -> str:
    """A result's `resultType`; absent means complete (servers older than 2026-07-28)."""
    value = result.get("resultType", COMPLETE)
    return value if isinstance(value, str) else repr(value)


def read_interim(result: Mapping[str, Any]) -> tuple[dict[str, Json], str | None]:
    """The `inputRequests` and `requestState` of an input_required result (ValueError if bad)."""
    requests = result.get("inputRequests")
    state = result.get("requestState")
    if requests is None and state is None:
        raise ValueError("input_required result has neither inputRequests nor requestState")
    if state is not None and not isinstance(state, str):
        raise ValueError("requestState must be a string")
    if requests is None:
        return {}, state
    if not isinstance(requests, Mapping):
        raise ValueError("inputRequests must be an object")
    for key, request in requests.items():
        if not isinstance(request, Mapping) or not isinstance(request.get("method"), str):
            raise ValueError(f"inputRequests[{key!r}] is not an input request")
    return dict(requests), state


def retry_params(params: Mapping[str, Any], responses: Mapping[str, Any] | None, state: str | None) -> Json:
    """The original params plus this round's answers and the echoed state (omitted when absent)."""
    out = dict(params)  # copied and popped in C: cheaper than a comprehension per round
    out.pop("inputResponses", None)
    out.pop("requestState", None)
    if responses:
        out["inputResponses"] = dict(responses)
    if state is not None:
        out["requestState"] = state
    return out


async def drive(
    send: Send,
    params: Mapping[str, Any],
    *,
    answer: Answer,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    max_input_requests: int = DEFAULT_MAX_INPUT_REQUESTS,
    deadline: float | None = None,
    result: Json | None = None,
    rounds: int = 0,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
) -> Json:
    """Run the exchange to a final result and return it.

    `send(params)` performs one request (fresh id) and returns its result dict. `result`, when
    given, is an interim result already in hand (resuming a paused call) and `rounds` the
    retries already spent. `deadline` is in seconds from now, for the whole exchange.
    """
    last = result
    pause = 0.0

    def fail(reason: str, message: str) -> InputRequiredError:
        return InputRequiredError(reason, message, last_result=last, rounds=rounds)

    guard = asyncio.timeout(deadline)
    try:
        async with guard:
            if last is None:
                last = await send(dict(params))
            while result_type(last) == INPUT_REQUIRED:
                try:
                    requests, state = read_interim(last)
                except ValueError as exc:
                    raise fail("malformed", f"server sent a malformed input_required result: {exc}") from None
                if rounds >= max_rounds:
                    raise fail("rounds", f"server still asked for input after {rounds} rounds (cap {max_rounds})")
                if len(requests) > max_input_requests:
                    raise fail("too_many_requests", f"server asked {len(requests)} questions in one "
                               f"round (cap {max_input_requests}, Client(max_input_requests=...))")
                if requests:
                    pause = 0.0
                    try:
                        responses: Json | None = await answer(requests)
                    except Unanswerable as exc:
                        raise fail("unanswerable", str(exc)) from None
                else:
                    # State-only round: the server is checkpointing or shedding load; back off.
                    pause = STATE_ONLY_FIRST_PAUSE if not pause else min(pause * 2, STATE_ONLY_MAX_PAUSE)
                    await sleep(pause)
                    responses = None
                rounds += 1
                last = await send(retry_params(params, responses, state))
            return last
    except TimeoutError:
        if guard.expired():
            raise fail("deadline", f"input_required exchange passed its {deadline} s deadline") from None
        raise
