"""What can go wrong on the client side, as a few exception types with clear messages.

A JSON-RPC error the server sends back is raised as `rondo.McpError` (the same class servers
raise), so one `except McpError` covers both sides. Everything else is a `ClientError`.
"""

from __future__ import annotations

from typing import Any


class ClientError(Exception):
    """Base class of every client-side failure that is not a JSON-RPC error from the server."""


class ProtocolError(ClientError):
    """The server broke the protocol: malformed JSON, an unknown id, an invalid result shape."""


class TransportError(ClientError):
    """The connection failed: the process exited, the stream ended early, the socket closed."""


class HttpError(TransportError):
    """An HTTP status that carried no JSON-RPC answer (so there is nothing better to raise)."""

    def __init__(self, status: int, body: str = "") -> None:
        snippet = body.strip().replace("\n", " ")[:200]
        super().__init__(f"HTTP {status}" + (f": {snippet}" if snippet else ""))
        self.status = status
        self.body = body


class RequestTimeout(TransportError, TimeoutError):
    """No answer within the configured time; the request was cancelled on the wire."""


class InputRequiredError(ClientError):
    """The input_required exchange could not finish.

    `reason` is one of `"rounds"` (the round cap was hit), `"deadline"` (the wall-clock bound
    for the whole exchange passed), `"unanswerable"` (no handler for an input request, or the
    handler's answer had the wrong shape), `"too_many_requests"` (one round asked more questions
    than `max_input_requests`) and `"malformed"` (the server's interim result was not
    a valid InputRequiredResult). `last_result` is the last result the server sent (a dict, or
    None when the first request never came back) and `rounds` how many retries were sent.
    """

    def __init__(
        self, reason: str, message: str, *, last_result: dict[str, Any] | None, rounds: int
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.last_result = last_result
        self.rounds = rounds
