"""In-memory transport: a client and a server in one process, no sockets.

A byte adapter over `Connection` with JSON round trips instead of bytes: every message goes
through encode/decode, so what a test sees is exactly what a socket would carry (no shared
mutable objects between the two sides).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec

from ..wire.bounds import may_be_deep, nesting_error, too_deep
from ..wire.jsonrpc import error_response, readable_id
from .connection import Connection

if TYPE_CHECKING:
    from ..server.server import Server

_encode = msgspec.json.encode
_decode = msgspec.json.decode

Listener = Callable[[dict[str, Any]], None]


def _copy(message: dict[str, Any]) -> dict[str, Any]:
    copied: dict[str, Any] = _decode(_encode(message))
    return copied


class MemoryConnection:
    """One client's view of a server: `send` a message, get its response."""

    def __init__(self, server: Server, *, auth: Any = None) -> None:
        self.server = server
        self.auth = auth
        self.closed = False
        # Receives what a legacy session sends outside any request (list changes, updates).
        self.on_message: Listener | None = None
        self._connection = Connection(server, self._outside, auth=auth)

    async def send(
        self, message: dict[str, Any], on_notification: Listener | None = None
    ) -> dict[str, Any] | None:
        """Deliver one request (returns its response) or notification (returns None).

        What the request produces before its response (notifications, a legacy session's
        requests to the client) goes to `on_notification`.
        """
        if self.closed:
            raise ConnectionError("connection closed")
        raw = _encode(message)
        msg: dict[str, Any] = _decode(raw)
        if may_be_deep(raw) and too_deep(msg):  # the bound every transport holds
            return error_response(readable_id(msg), nesting_error()) if "id" in msg else None
        rid = msg.get("id")
        box: list[dict[str, Any]] = []

        def sink(out: dict[str, Any]) -> None:
            # The answer: a response with our id, or the id-less error an unusable id gets.
            if "method" not in out and "id" in msg and not box and out.get("id", rid) == rid:
                box.append(out)
            elif on_notification is not None:
                on_notification(_copy(out))

        task = self._connection.feed(msg, sink)
        if task is not None:
            try:
                await task
            except asyncio.CancelledError:
                if task.cancelled() and not _cancelling():
                    return None  # the server cancelled the request; the caller was not
                raise
            if not box and _cancelling():
                # The caller was cancelled (a client timeout) and the request with it, which
                # swallowed the cancellation: hand it back, or the caller's timeout is lost.
                raise asyncio.CancelledError
        return _copy(box[0]) if box else None

    def _outside(self, note: dict[str, Any]) -> None:
        if self.on_message is not None:
            self.on_message(_copy(note))

    async def close(self) -> None:
        self.closed = True
        self._connection.close()


def _cancelling() -> bool:
    current = asyncio.current_task()
    return current is not None and current.cancelling() > 0


def connect(server: Server, *, auth: Any = None) -> MemoryConnection:
    return MemoryConnection(server, auth=auth)
