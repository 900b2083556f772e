"""The server side: the registry users decorate and what extensions build from.

`Method` (a row of the method table), `Wrap` (an interceptor around a row) and `Request` (for
extensions) load on first use, so importing `rondo.Server` stays cheap for stdio servers that
hosts spawn on demand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .method import Method as Method
    from .method import Wrap as Wrap
    from .request import Request as Request

__all__ = ["Method", "Request", "Wrap"]


def __getattr__(name: str) -> Any:
    if name in ("Method", "Wrap"):
        from . import method

        return getattr(method, name)
    if name == "Request":
        from .request import Request

        return Request
    raise AttributeError(f"module 'rondo.server' has no attribute {name!r}")
