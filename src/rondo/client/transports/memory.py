"""In-memory client transport: talk to a `rondo.Server` in this process, no sockets."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from rondo.client.errors import ProtocolError, TransportError
from rondo.client.transports import Incoming, Json, is_server_request


class MemoryTransport:
    name = "memory"
    carries_headers = False

    def __init__(self, server: Any, *, auth: Any = None) -> None:
        self.server = server
        self.auth = auth
        self.legacy_version: str | None = None
        self._conn: Any = None
        self._on_incoming: Incoming | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    async def start(self, on_incoming: Incoming) -> None:
        from rondo.transport.memory import connect

        self._on_incoming = on_incoming
        self._conn = connect(self.server, auth=self.auth)
        self._conn.on_message = self._notify_cb  # a legacy session's messages outside requests

    def _notify_cb(self, message: Json) -> None:
        task = asyncio.ensure_future(self._incoming(message))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _incoming(self, message: Json) -> None:
        assert self._on_incoming is not None
        reply = await self._on_incoming(message)
        if reply is not None and is_server_request(message) and self._conn is not None:
            await self._conn.send(reply)  # 2025-11-25: the answer to a server request

    async def request(self, message: Json, headers: Mapping[str, str] | None = None) -> Json:
        if self._conn is None:
            raise TransportError("memory transport is not running")
        try:
            response: Json | None = await self._conn.send(message, self._notify_cb)
        except ConnectionError as exc:
            raise TransportError(str(exc)) from exc
        # Let notifications emitted before the response reach their callbacks first.
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        if response is None:
            raise TransportError(f"server dropped request {message.get('id')!r} without answering")
        if response.get("id") != message.get("id"):
            raise ProtocolError(f"server answered id {response.get('id')!r} to request {message.get('id')!r}")
        return response

    async def after_handshake(self) -> None:
        return None

    async def notify(self, message: Json) -> None:
        if self._conn is None:
            raise TransportError("memory transport is not running")
        await self._conn.send(message, self._notify_cb)

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()
        for task in list(self._tasks):
            task.cancel()
