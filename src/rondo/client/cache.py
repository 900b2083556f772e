"""A small cache for cacheable results, honouring `ttlMs` and `cacheScope` (spec §6).

Entries are keyed by method and the params that shape the result (a page's cursor, a
resource's uri). A missing or non-positive `ttlMs` is never stored (it is stale at once); a
missing `cacheScope` counts as `private`, the safe reading. Private entries belong to one
authorization context, so `drop_private()` runs whenever the client's credentials change.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

Json = dict[str, Any]
Key = tuple[str, str | None]


class ResultCache:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._entries: dict[Key, tuple[float, str, Json]] = {}
        # The hints of the last result put for each key, stored or not: (ttlMs, scope), a
        # missing or bad ttlMs as 0. A proxy reads them to know how long its copy is fresh.
        self.hints: dict[Key, tuple[float, str]] = {}

    def get(self, method: str, key: str | None) -> Json | None:
        """The cached result if still fresh, else None (and the stale entry is dropped)."""
        entry = self._entries.get((method, key))
        if entry is None:
            return None
        expires, _, result = entry
        if self._clock() >= expires:
            del self._entries[(method, key)]
            return None
        return result

    def put(self, method: str, key: str | None, result: Json) -> None:
        ttl = result.get("ttlMs")
        scope = result.get("cacheScope")
        scope = scope if scope in ("public", "private") else "private"
        if isinstance(ttl, bool) or not isinstance(ttl, int | float) or ttl <= 0:
            self.hints[(method, key)] = (0.0, scope)
            return
        self.hints[(method, key)] = (float(ttl), scope)
        self._entries[(method, key)] = (self._clock() + ttl / 1000.0, scope, result)

    def invalidate(self, method: str | None = None, key: str | None = None) -> None:
        """Forget one entry, every entry of a method (key None), or everything (method None)."""
        if method is None:
            self._entries.clear()
            self.hints.clear()
        elif key is not None:
            self._entries.pop((method, key), None)
            self.hints.pop((method, key), None)
        else:
            for k in [k for k in self._entries if k[0] == method]:
                del self._entries[k]
            for k in [k for k in self.hints if k[0] == method]:
                del self.hints[k]

    def drop_private(self) -> None:
        for k in [k for k, e in self._entries.items() if e[1] == "private"]:
            del self._entries[k]

    def __len__(self) -> int:
        return len(self._entries)
