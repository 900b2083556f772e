"""Client transports: each moves JSON-RPC messages and nothing else.

A transport is started with a callback for what the server sends outside a response
(notifications, and on the 2025-11-25 wire server requests, whose answers the callback
returns). `request` returns the response whose id matches; `notify` sends a notification.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol, cast

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


async def answered(pending: dict[Any, asyncio.Future[Json]], message: Json,
                   send: Callable[[Json], Awaitable[None]]) -> Json:
    """Send a request over a transport whose answers arrive on another path (a reader that
    resolves `pending[id]`) and await its answer. Cancelled before the answer, the server is
    told (the only way to cancel there is to say so; a late answer is then ignored):
    cancelling the caller cancels the awaited future too, so "cancelled" means unanswered."""
    rid = message["id"]
    future: asyncio.Future[Json] = asyncio.get_running_loop().create_future()
    pending[rid] = future
    try:
        await send(message)
        return await future
    except asyncio.CancelledError:
        if future.cancelled() or not future.done():
            with contextlib.suppress(Exception):
                await asyncio.shield(send(
                    {"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": rid, "reason": "cancelled by the client"}}))
        raise
    finally:
        pending.pop(rid, None)
        if future.done() and not future.cancelled():
            # After a failed send the reader may fail this future too (the server's exit):
            # the send's error is the one raised, so this one counts as seen.
            future.exception()


def is_server_request(message: Mapping[str, Any]) -> bool:
    return "method" in message and message.get("id") is not None


__all__ = ["Incoming", "Json", "Transport", "is_response", "is_server_request", "make_transport"]


def make_transport(target: Any, *, headers: Any, env: Any, cwd: Any, stderr: Any, auth: Any = None) -> Transport:
    if hasattr(target, "request") and hasattr(target, "start"):
        return cast(Transport, target)
    if isinstance(target, str) and target.startswith(("http://", "https://")):
        from rondo.client.transports.http import HttpTransport

        return HttpTransport(target, headers=headers, auth=auth)
    if hasattr(target, "core") and auth is not None and hasattr(auth, "binding"):
        from rondo.client.transports.memory import MemoryTransport

        return MemoryTransport(target, auth=auth)  # in memory: call as this verified principal
    if auth is not None:  # auth hook: OAuth is HTTP's; stdio servers read their environment
        raise ValueError("auth= applies to HTTP targets only, or a rondo.auth.Principal to an "
                         "in-memory server (rondo.testing.principal); stdio servers take "
                         "credentials from their environment")
    if isinstance(target, str):
        target = shlex.split(target)
    if isinstance(target, Sequence) and not isinstance(target, str | bytes):
        from rondo.client.transports.stdio import StdioTransport

        return StdioTransport([str(part) for part in target], env=env, cwd=cwd, stderr=stderr)
    if hasattr(target, "core"):
        from rondo.client.transports.memory import MemoryTransport

        return MemoryTransport(target)
    raise TypeError(f"cannot connect to {target!r}: pass a rondo.Server, a URL or a command")

