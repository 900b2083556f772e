"""Client transports: each moves JSON-RPC messages and nothing else.

A transport is started with a callback for what the server sends outside a response
(notifications, and on the 2025-11-25 wire server requests, whose answers the callback
returns). `request` returns the response whose id matches; `notify` sends a notification.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

Json = dict[str, Any]
Incoming = Callable[[Json], Awaitable[Json | None]]


class Transport(Protocol):
    name: str
    legacy_version: str | None

    async def start(self, on_incoming: Incoming) -> None: ...

    async def request(self, message: Json, headers: Mapping[str, str] | None = None) -> Json: ...

    async def notify(self, message: Json) -> None: ...

    async def after_handshake(self) -> None: ...

    async def close(self) -> None: ...


def is_response(message: Mapping[str, Any]) -> bool:
    return "id" in message and "method" not in message and ("result" in message or "error" in message)


def is_server_request(message: Mapping[str, Any]) -> bool:
    return "method" in message and message.get("id") is not None
