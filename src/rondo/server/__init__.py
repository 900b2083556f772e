"""The server side: the registry users decorate, the method table, dialects and the Context.

`Method` and `Request` (for extensions) load on first use, so importing `rondo.Server` stays
cheap for stdio servers that hosts spawn on demand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .method import Method as Method
    from .request import Request as Request

__all__ = ["Method", "Request"]


def __getattr__(name: str) -> Any:
    if name == "Method":
        from .method import Method

        return Method
    if name == "Request":
        from .request import Request

        return Request
    raise AttributeError(f"module 'rondo.server' has no attribute {name!r}")
