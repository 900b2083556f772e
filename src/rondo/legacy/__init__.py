"""The 2025-11-25 (handshake) era, removable as a unit: the dialect (`dialect.py`), its
sessions (`sessions.py`), the back-channel ask (`ask.py`) and explicit rounds (`rounds.py`).

The public names: how it is served, and what `ctx.ask` raises when a legacy client cannot
answer. They load on first use, so a module of this package can be imported without the rest.

    server.asgi(legacy=rondo.legacy.LegacyConfig(idle_timeout=120))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .ask import AskError, AskRejected, AskTimeout, ClientCannotAnswer
    from .dialect import close_stream
    from .sessions import ClientRefused, LegacyConfig

_LAZY = {
    "AskError": "rondo.legacy.ask",
    "AskRejected": "rondo.legacy.ask",
    "AskTimeout": "rondo.legacy.ask",
    "ClientCannotAnswer": "rondo.legacy.ask",
    "ClientRefused": "rondo.legacy.sessions",
    "LegacyConfig": "rondo.legacy.sessions",
    "close_stream": "rondo.legacy.dialect",
}


def __getattr__(name: str) -> Any:
    import importlib

    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'rondo.legacy' has no attribute {name!r}")


__all__ = [
    "AskError",
    "AskRejected",
    "AskTimeout",
    "ClientCannotAnswer",
    "ClientRefused",
    "LegacyConfig",
    "close_stream",
]
