"""One request on its way through the core: a slotted value every method handler takes.

Built once by whoever decoded the message (a transport, or `Core.handle`), with the dialect
the era detector chose; method handlers read it and never see transport details.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..wire.envelope import Envelope

Emit = Callable[[dict[str, Any]], None]


def _noop(_: dict[str, Any]) -> None:
    return None


class Request:
    """`id`, `method`, `params` as received; `env` (the `_meta` envelope or the legacy
    session's equivalent); `emit` for notifications scoped to this request; `auth` (trusted
    authentication from the transport); `dialect` (the era's rules); `call` (the legacy
    session's per-request channel, None on 2026-07-28); `headers` (the HTTP request's headers as
    ASGI pairs, None on pipes: read for trace context); `peer` (the HTTP client's address as
    the ASGI scope gives it, `(host, port)`, after any trusted proxy headers; None on pipes:
    what tells anonymous clients apart for per-client quotas); `extras` (what middleware hands
    the handler as `ctx.extras`, None until some middleware asks for it)."""

    __slots__ = ("id", "method", "params", "env", "emit", "auth", "dialect", "call", "headers",
                 "peer", "extras")

    def __init__(
        self,
        rid: Any,
        method: str,
        params: dict[str, Any],
        env: Envelope,
        dialect: Any,
        *,
        emit: Emit = _noop,
        auth: Any = None,
        call: Any = None,
        headers: Any = None,
        peer: Any = None,
    ) -> None:
        self.id = rid
        self.method = method
        self.params = params
        self.env = env
        self.emit = emit
        self.auth = auth
        self.dialect = dialect
        self.call = call
        self.headers = headers
        self.peer = peer
        self.extras: dict[str, Any] | None = None

    def again(self, params: dict[str, Any]) -> Request:
        """The same request with new params: the next round of an in-process MRTR flow."""
        # `extras` starts empty again: middleware runs anew on every round, as on the wire.
        return Request(self.id, self.method, params, self.env, self.dialect, emit=self.emit,
                       auth=self.auth, call=self.call, headers=self.headers, peer=self.peer)

    def __repr__(self) -> str:
        return f"<Request {self.method} id={self.id!r} {self.dialect.era}>"
