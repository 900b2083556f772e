"""Helpers for tests: talk to a `rondo.Server` in this process, no sockets.

    conn = rondo.testing.connect(server)
    response = await conn.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", ...})

For whole flows, `rondo.Client(server)` uses the same in-memory link with handlers and the
retry loop; this is the raw message level underneath.

A protected server (`rondo.auth`) sees `ctx.auth` only for a verified token, which the
in-memory link has none of: `Client(server, auth=rondo.testing.principal("alice"))` calls as
that principal (`ctx.auth`, and the binding request state and tasks are bound to).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .transport.memory import MemoryConnection, connect

if TYPE_CHECKING:
    from .auth.principal import Principal

__all__ = ["MemoryConnection", "connect", "principal"]


def principal(
    subject: str | None = "tester",
    *,
    scopes: Iterable[str] = (),
    client_id: str | None = "rondo-tests",
    issuer: str | None = "https://issuer.test",
    claims: Mapping[str, Any] | None = None,
    expires_in: float = 3600.0,
) -> Principal:
    """A `rondo.auth.Principal` as a verified token would give it, for in-memory tests:
    pass it as `Client(server, auth=...)` or `rondo.testing.connect(server, auth=...)`.
    `claims` adds (or overrides) raw claims; no token is made or checked."""
    from .auth.principal import Principal

    if isinstance(scopes, str):
        raise TypeError("scopes is a list of scope names, not one string")
    made: dict[str, Any] = {"exp": time.time() + expires_in}
    for key, value in (("sub", subject), ("client_id", client_id), ("iss", issuer)):
        if value is not None:
            made[key] = value
    granted = list(scopes)
    if granted:
        made["scope"] = " ".join(granted)
    made.update(claims or {})
    if not made.get("sub") and not made.get("client_id"):
        raise ValueError("a principal needs a subject or a client_id")
    return Principal.from_claims(made)
