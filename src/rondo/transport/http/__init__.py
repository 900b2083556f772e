"""Streamable HTTP as a plain ASGI application (`HttpApp`), for any ASGI server.

`app.py` is the app; `asgi.py` the shared writers; `checks.py` and `verdicts.py` the header
checks and what they concluded per header block; `pending.py` the notifications one SSE answer
holds; `legacy.py` the 2025-11-25 session half. `serve()` (uvicorn, bounded) lives in
`rondo.transport.serve` and is reachable from here too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .app import DEFAULT_MAX_BODY, DEFAULT_MAX_PENDING, KEEPALIVE_SECONDS, LOOPBACK_HOSTS, HttpApp

if TYPE_CHECKING:
    from ..serve import SERVE_OPTIONS as SERVE_OPTIONS
    from ..serve import serve as serve

__all__ = ["DEFAULT_MAX_BODY", "DEFAULT_MAX_PENDING", "KEEPALIVE_SECONDS", "LOOPBACK_HOSTS",
           "HttpApp", "serve"]


def __getattr__(name: str) -> Any:
    # `serve` sits above the app (it runs one under uvicorn): found here without importing it
    # for every user of the app.
    if name in ("serve", "SERVE_OPTIONS"):
        from .. import serve as serving

        return getattr(serving, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
