"""Ask the client for its roots (deprecated in 2026-07-28): `rondo.roots.list()`.

Read the answer with `rondo.roots.response(ctx, key, request)`: `MISSING` until the client has
answered, then a list of `Root`. Implementation in `rondo.kinds.roots`.
"""

from __future__ import annotations

from .kinds import MISSING, response
from .kinds.roots import Root, RootList
from .kinds.roots import list_roots as list  # noqa: A004 - `rondo.roots.list()` reads best

__all__ = ["MISSING", "Root", "RootList", "list", "response"]
