"""Client transports: each moves JSON-RPC messages and nothing else.

A transport is started with a callback for what the server sends outside a response
(notifications, and on the 2025-11-25 wire server requests, whose answers the callback
returns). `request` returns the response whose id matches; `notify` sends a notification.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from rondo.wire.jsonrpc import is_response

Json = dict[str, Any]
Incoming = Callable[[Json], Awaitable[Json | None]]


class Transport(Protocol):
    name: str
    legacy_version: str | None
    # Does this transport carry per-request HTTP headers (so the client must send the
    # `Mcp-Param-*` headers its tools' `x-mcp-header` annotations ask for)?
    carries_headers: bool

    async def start(self, on_incoming: Incoming) -> None: ...

    async def request(self, message: Json, headers: Mapping[str, str] | None = None) -> Json: ...

    async def notify(self, message: Json) -> None: ...

    async def after_handshake(self) -> None: ...

    async def close(self) -> None: ...


def is_server_request(message: Mapping[str, Any]) -> bool:
    return "method" in message and message.get("id") is not None


__all__ = ["Incoming", "Json", "Transport", "is_response", "is_server_request"]
