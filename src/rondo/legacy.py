"""The 2025-11-25 (handshake) era's public names: how it is served, and what `ctx.ask` raises
when a legacy client cannot answer.

    server.asgi(legacy=rondo.legacy.LegacyConfig(idle_timeout=120))
"""

from __future__ import annotations

from .server.legacy import close_stream
from .server.legacy_ask import AskError, AskRejected, AskTimeout, ClientCannotAnswer
from .server.sessions import ClientRefused, LegacyConfig

__all__ = [
    "AskError",
    "AskRejected",
    "AskTimeout",
    "ClientCannotAnswer",
    "ClientRefused",
    "LegacyConfig",
    "close_stream",
]
