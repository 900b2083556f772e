"""What one server can make a client spend: response and event sizes, concurrent server
requests, questions per round. Defaults are in docs/limits.md."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from .transports import is_server_request

# A whole HTTP answer (JSON body) and one SSE event; stdio caps lines at the same size.
DEFAULT_MAX_RESPONSE = 64 * 1024 * 1024
DEFAULT_MAX_EVENT = 64 * 1024 * 1024
# 2025-11-25 server->client requests answered at once; the excess gets an error at once.
DEFAULT_MAX_SERVER_REQUESTS = 32
# Input requests one input_required round may carry.
DEFAULT_MAX_INPUT_REQUESTS = 64
# How long close() waits for handlers still answering server requests.
CLOSE_GRACE = 2.0
# After a write to a stdio server fails: how long a dying server has to be reaped, so the error
# says it exited (and its code) rather than only that its stdin is closed.
EXIT_GRACE = 0.5

log = logging.getLogger("rondo.client")


def positive(name: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer")
    return value


class ServerRequestGate:
    """Counts the server requests being answered; refuses beyond `cap`."""

    __slots__ = ("cap", "active")

    def __init__(self, cap: int = DEFAULT_MAX_SERVER_REQUESTS) -> None:
        self.cap = positive("max_server_requests", cap)
        self.active = 0

    def admit(self) -> bool:
        if self.active >= self.cap:
            return False
        self.active += 1
        return True

    def release(self) -> None:
        self.active -= 1

    def refusal(self, message: dict[str, Any]) -> dict[str, Any]:
        log.warning("server sent more than %d concurrent requests: refusing %r",
                    self.cap, message.get("method"))
        return {"jsonrpc": "2.0", "id": message.get("id"), "error": {
            "code": -32603,
            "message": f"Client busy: more than {self.cap} server requests at once"}}


def callback_failure(message: dict[str, Any]) -> dict[str, Any]:
    """The reply when the client's own callback broke: the server learns nothing more (the
    text stays in this process's log, under the reference it gets)."""
    import secrets

    ref = secrets.token_hex(6)
    log.error("answering the server's %r failed [ref %s]", message.get("method"), ref,
              exc_info=True)
    return {"jsonrpc": "2.0", "id": message.get("id"),
            "error": {"code": -32603, "message": f"Client error (reference {ref})"}}


async def answer_incoming(gate: ServerRequestGate, message: dict[str, Any], request: bool,
                          on_incoming: Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]],
                          send: Callable[[dict[str, Any]], Awaitable[None]],
                          quiet: type[Exception] = Exception) -> None:
    """Run the client's callback for one message the server sent unasked. A server request
    (one `gate` admitted) gets the callback's reply, or `callback_failure`'s when the callback
    broke, through `send` (a `quiet` failure there is dropped: the server is going away), and
    gives its place in the gate back; a notification's callback runs alike, nothing is sent."""
    try:
        try:
            reply = await on_incoming(message)
        except Exception:  # a bug in a callback must not kill the reader
            reply = callback_failure(message)
        if reply is not None and request:
            with contextlib.suppress(quiet):
                await send(reply)
    finally:
        if request:
            gate.release()


async def take_incoming(gate: ServerRequestGate, message: dict[str, Any],
                        on_incoming: Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]],
                        send: Callable[[dict[str, Any]], Awaitable[None]],
                        tasks: set[asyncio.Task[Any]], quiet: type[Exception] = Exception) -> None:
    """A request or notification the server sent, taken off a transport's reader: a request
    beyond `gate`'s bound is refused at once, before reading on (a flood paces itself);
    otherwise `answer_incoming` runs in a task of its own, kept in `tasks` until it ends."""
    request = is_server_request(message)
    if request and not gate.admit():
        with contextlib.suppress(quiet):
            await send(gate.refusal(message))
        return
    task = asyncio.create_task(answer_incoming(gate, message, request, on_incoming, send, quiet))
    tasks.add(task)
    task.add_done_callback(tasks.discard)
