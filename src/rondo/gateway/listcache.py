"""How long the proxy's copy of an upstream's lists is fresh: the upstream's own cache hints.

The proxy registers one relay per upstream tool, prompt, resource and template, and answers
`*/list` from that registry. A 2026-07-28 upstream says how long each list page stays fresh
(`ttlMs`, spec §6): a downstream list within that lifetime costs no upstream request; past it,
the next downstream list lists the upstream again first (one request in flight per list, the
others wait for it). A page without a positive `ttlMs` is stale at once. A `list_changed` from
the upstream makes the list stale. A 2025-11-25 upstream sends no hints: its lists stay as
listed until it says they changed (its session's `list_changed`).

The proxy lists with its own credentials, so what it lists is one authorization context's; a
list the upstream marks `private` is passed on as `private` (`cacheScope` of the proxy's own
list results), so no downstream shared cache hands it across principals. With
`upstream_auth=` (each caller's own credentials upstream) a private list is listed per
principal instead (gateway/percaller.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..auth.principal import Principal
from ..server.method import Wrap
from .chain import Chained
from .quiet import Quiet

if TYPE_CHECKING:
    from ..core.core import Core
    from ..server.method import Handler
    from ..server.request import Request
    from ..server.server import Server

# The upstream methods each of the proxy's lists is made of, and the downstream list methods.
UPSTREAM: dict[str, tuple[str, ...]] = {
    "tools": ("tools/list",), "prompts": ("prompts/list",),
    "resources": ("resources/list", "resources/templates/list")}
DOWNSTREAM = {"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources",
              "resources/templates/list": "resources"}


def _always(core: Core, params: Mapping[str, Any]) -> bool:
    return True


class Freshness:
    """Per list: until when the proxy's copy is fresh (None: until the upstream says it changed)
    and whether the upstream marked it private."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.until: dict[str, float | None] = {}
        self.private: dict[str, bool] = {}
        self.locks = {what: asyncio.Lock() for what in UPSTREAM}

    def heard(self, what: str, hints: Iterable[tuple[float, str]], *, modern: bool) -> None:
        """The hints of every page just listed for `what`."""
        pages = list(hints)
        self.private[what] = any(scope == "private" for _, scope in pages) if modern else False
        if not modern:
            self.until[what] = None
            return
        ttl = min((t for t, _ in pages), default=0.0)
        self.until[what] = self.clock() + ttl / 1000.0

    def stale(self, what: str) -> bool:
        until = self.until.get(what)
        return until is not None and self.clock() >= until

    def ttl_left_ms(self, what: str) -> int | None:
        """The time `what` has left, in ms (None: it carries no lifetime)."""
        until = self.until.get(what)
        return None if until is None else max(0, int((until - self.clock()) * 1000))


class ListRefresh(Chained, Quiet):
    """The proxy's wrap of the four list methods: list the upstream again when the proxy's copy
    is past the upstream's hint, then answer from the registry."""

    name = "dev.rondo/proxy-lists"

    def __init__(self, fresh: Freshness, refresh: Callable[[str], Any]) -> None:
        self.fresh = fresh
        self.refresh = refresh  # async (what) -> None: list the upstream's `what` again
        self.per_caller: Any = None  # gateway/percaller.py: `upstream_auth=` given
        self.server: Server | None = None

    def attach(self, server: Server) -> None:
        self.server = server  # the proxy's own (mounted, the parent's lists are not its)

    def wraps(self) -> Iterable[Wrap]:
        return [Wrap(method, self._listed, suspends=_always) for method in DOWNSTREAM]

    async def _listed(self, core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
        what = DOWNSTREAM[req.method]
        if self.fresh.stale(what):
            async with self.fresh.locks[what]:
                if self.fresh.stale(what):  # another request may have listed it meanwhile
                    await self.refresh(what)
        per = self.per_caller
        if per is not None and self.fresh.private.get(what) and core.server is self.server:
            # Listed with each caller's own credentials: the list is that principal's.
            if isinstance(req.auth, Principal):
                answered: dict[str, Any] = await per.answer(core, req, req.auth)
                return answered
            result: dict[str, Any] = per.shared(core, req)
        else:
            result = await call_next(core, req)
        # Passed on: no longer fresh downstream than upstream, and private stays private.
        left = self.fresh.ttl_left_ms(what)
        if left is not None and isinstance(result.get("ttlMs"), int):
            result["ttlMs"] = min(result["ttlMs"], left)
        if self.fresh.private.get(what) and "cacheScope" in result:
            result["cacheScope"] = "private"
        return result
