"""Streamable HTTP as a plain ASGI application (`HttpApp`), for any ASGI server.

`inbound.py` is the check sequence every HTTP front end shares, as functions without I/O;
`verdicts.py` remembers what those checks concluded per header block. On top, the app:
`app.py` routes a request through them, reading its body (`body.py`) and answering
(`answer.py`: one JSON body or an SSE stream, `pending.py` bounding what one stream holds),
`lifespan.py` what it needs around serving, `asgi.py` the shared writers, `legacy.py` the
2025-11-25 session half. `serve()` (uvicorn, bounded) lives in
`rondo.transport.serve` and is reachable from here too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .app import DEFAULT_MAX_BODY, DEFAULT_MAX_PENDING, KEEPALIVE_SECONDS, HttpApp
from .inbound import LOOPBACK_HOSTS

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
