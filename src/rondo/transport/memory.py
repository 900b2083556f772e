"""In-memory transport: a client and a server in one process, no sockets.

Messages go through a JSON encode/decode round trip, so what a test sees is exactly what a
socket would carry (no shared mutable objects between the two sides).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from ..server.server import Server

_encode = msgspec.json.encode
_decode = msgspec.json.decode


class MemoryConnection:
    """One client's view of a server: `send` a message, get its response."""

    def __init__(self, server: Server, *, auth: Any = None) -> None:
        self.server = server
        self.auth = auth
        self._inflight: dict[Any, asyncio.Task[Any]] = {}
        self.closed = False
        self._legacy: Any = None  # a PipeSession once the client sends a handshake `initialize`
        # Receives what a legacy session sends outside any request (list changes, updates).
        self.on_message: Callable[[dict[str, Any]], None] | None = None

    async def send(
        self, message: dict[str, Any], on_notification: Callable[[dict[str, Any]], None] | None = None
    ) -> dict[str, Any] | None:
        """Deliver one request (returns its response) or notification (returns None)."""
        if self.closed:
            raise ConnectionError("connection closed")
        msg = _decode(_encode(message))
        if self._legacy is not None or msg.get("method") == "initialize":
            handled, response = await self._legacy_send(msg, on_notification)
            if handled:
                return None if response is None else _decode(_encode(response))
        if "id" not in msg:
            if msg.get("method") == "notifications/cancelled":
                rid = (msg.get("params") or {}).get("requestId")
                task = self._inflight.get(rid)
                if task is not None:
                    task.cancel()
            return None

        def emit(note: dict[str, Any]) -> None:
            if on_notification is not None:
                on_notification(_decode(_encode(note)))

        handler = self.server.core.handle
        task = asyncio.ensure_future(handler(msg, emit=emit, auth=self.auth))
        rid = msg.get("id")
        self._inflight[rid] = task
        try:
            response = await task
        except asyncio.CancelledError:
            if task.cancelled():
                return None
            raise
        finally:
            self._inflight.pop(rid, None)
        return None if response is None else _decode(_encode(response))

    async def _legacy_send(
        self, msg: dict[str, Any], on_notification: Callable[[dict[str, Any]], None] | None
    ) -> tuple[bool, Any]:
        """The handshake era: `initialize` opens a session on this connection, later messages use it."""
        from ..server.legacy import NOT_LEGACY, PipeSession

        if self._legacy is None:
            self._legacy = PipeSession(self.server, self._outside, auth=self.auth)

        def relay(note: dict[str, Any]) -> None:
            if on_notification is not None:
                on_notification(_decode(_encode(note)))

        response = await self._legacy.exchange(msg, relay)
        if self._legacy.session is None:
            self._legacy.close()
            self._legacy = None
        return response is not NOT_LEGACY, response

    def _outside(self, note: dict[str, Any]) -> None:
        if self.on_message is not None:
            self.on_message(_decode(_encode(note)))

    async def close(self) -> None:
        self.closed = True
        for task in list(self._inflight.values()):
            task.cancel()
        if self._legacy is not None:
            self._legacy.close()


def connect(server: Server, *, auth: Any = None) -> MemoryConnection:
    return MemoryConnection(server, auth=auth)
