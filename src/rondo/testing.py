"""Helpers for tests: talk to a `rondo.Server` in this process, no sockets.

    conn = rondo.testing.connect(server)
    response = await conn.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", ...})

For whole flows, `rondo.Client(server)` uses the same in-memory link with handlers and the
retry loop; this is the raw message level underneath.
"""

from __future__ import annotations

from .transport.memory import MemoryConnection, connect

__all__ = ["MemoryConnection", "connect"]
