"""A private upstream list, listed per principal: `proxy(upstream_auth=...)` calls the upstream
with each caller's own credentials, so an upstream list it marks `private` (2026-07-28
`cacheScope`) may differ between callers. The proxy's one listing (its own credentials) cannot
stand for them: each principal's list is listed upstream with that principal's credentials,
kept for the upstream's `ttlMs` under the principal (at most `MAX_PRINCIPALS` principals, least
recently used dropped first), and answered from it, paged as the proxy pages its own lists.
What is kept of a listing is its entries' names (URIs), at most `MAX_ENTRIES` of them and
`MAX_CHARS` characters together; each page is let go once read (adopted, below). One listing
is in flight per principal and list; another principal's does not wait for it.

An entry only some callers see is registered too (adopted), so a caller can call what it
lists; it is listed only to the callers whose own listing holds it (a caller without a
verified principal gets the proxy's own listing). Adopted entries stay registered (at most
`MAX_ADOPTED` a list): calling one is up to the upstream, which checks the caller's own
credentials. Loaded only by a proxy given `upstream_auth=`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from ..auth.principal import CALLER, Principal
from ..client import ClientError, RequestTimeout
from ..core.methods import page
from ..wire.errors import McpError
from .upstream_errors import passed_on

if TYPE_CHECKING:
    from ..core.core import Core
    from ..server.request import Request
    from .upstream import Upstream

log = logging.getLogger("rondo.gateway")

UNAVAILABLE = -32603
MAX_PRINCIPALS = 256  # principals whose lists are kept at once
MAX_PAGES = 64  # pages of one upstream list read for one principal
MAX_ADOPTED = 1024  # entries of one list registered beyond the proxy's own listing
MAX_ENTRIES = 10_000  # entries kept of one principal's listing (the rest not read)
MAX_CHARS = 1 << 20  # characters of the names (URIs) kept of one principal's listing
# Per downstream list method: the result key, the field naming an entry, the registry.
SHAPE = {"tools/list": ("tools", "name", "tools"),
         "prompts/list": ("prompts", "name", "prompts"),
         "resources/list": ("resources", "uri", "resources"),
         "resources/templates/list": ("resourceTemplates", "uriTemplate", "templates")}


def principal_key(principal: Principal) -> str:
    """Who a listing is for: issuer, subject, client and granted scopes (the upstream sees a
    token exchanged for exactly these)."""
    return repr((principal.issuer, principal.subject, principal.client_id,
                 sorted(principal.scopes)))


class PerCaller:
    """The per-principal lists of one proxy (see the module docstring)."""

    def __init__(self, link: Upstream, adopt: Callable[[str, list[dict[str, Any]]], list[str]],
                 *, clock: Callable[[], float] = time.monotonic,
                 limit: int = MAX_PRINCIPALS) -> None:
        self.link = link
        self.adopt = adopt  # (method, entries) -> the names (URIs) it registered
        self.clock = clock
        self.limit = limit
        self.kept: OrderedDict[tuple[str, str], tuple[float, list[str]]] = OrderedDict()
        self.adopted: dict[str, set[str]] = {method: set() for method in SHAPE}
        # (method, principal) -> [its lock, requests holding or awaiting it]: one listing in
        # flight per principal and list; an entry lives while a request uses it (bounded).
        self.locks: dict[tuple[str, str], list[Any]] = {}

    @contextlib.asynccontextmanager
    async def _one_listing(self, key: tuple[str, str]) -> AsyncIterator[None]:
        held = self.locks.get(key)
        if held is None:
            held = self.locks[key] = [asyncio.Lock(), 0]
        held[1] += 1
        try:
            async with held[0]:
                yield
        finally:
            held[1] -= 1
            if not held[1]:
                del self.locks[key]

    async def answer(self, core: Core, req: Request, principal: Principal) -> dict[str, Any]:
        method = req.method
        key = (method, principal_key(principal))
        kept = self.kept.get(key)
        if kept is None or self.clock() >= kept[0]:
            async with self._one_listing(key):  # this principal's other requests wait for it
                kept = self.kept.get(key)
                if kept is None or self.clock() >= kept[0]:
                    kept = await self._list(method, principal)
                    self.kept[key] = kept
                    while len(self.kept) > self.limit:
                        self.kept.popitem(last=False)
        self.kept.move_to_end(key)
        result_key, _, registry_name = SHAPE[method]
        registry = getattr(core.server, registry_name)
        items = [registry[name] for name in kept[1] if name in registry]
        result = page(core, items, req.params, result_key, req.auth)
        result["ttlMs"] = max(0, int((kept[0] - self.clock()) * 1000))
        result["cacheScope"] = "private"
        return result

    def shared(self, core: Core, req: Request) -> dict[str, Any]:
        """A caller without a verified principal: the proxy's own listing (what no principal's
        listing brought in is left out)."""
        result_key, _, registry_name = SHAPE[req.method]
        adopted = self.adopted[req.method]
        items = [item for name, item in getattr(core.server, registry_name).items()
                 if name not in adopted]
        return page(core, items, req.params, result_key, req.auth)

    async def _list(self, method: str, principal: Principal) -> tuple[float, list[str]]:
        """Page through the upstream's `method` with `principal`'s credentials: the names
        listed (bounded), each page's entries adopted as it comes."""
        client = self.link.client
        if client is None:
            raise McpError(UNAVAILABLE, "upstream unavailable: not connected")
        result_key, field, _ = SHAPE[method]
        adopted = self.adopted[method]
        names: list[str] = []
        chars = 0
        ttl: float | None = None
        cursor: Any = None
        caller = CALLER.set(principal)
        try:
            for _ in range(MAX_PAGES):
                result = await client.request(method, {} if cursor is None else {"cursor": cursor})
                listed = result.get(result_key)
                entries = [e for e in listed if isinstance(e, dict)] \
                    if isinstance(listed, list) else []
                if len(adopted) < MAX_ADOPTED:
                    adopted.update(self.adopt(method, entries[:MAX_ADOPTED - len(adopted)]))
                full = False
                for entry in entries:
                    name = entry.get(field)
                    if not isinstance(name, str):
                        continue
                    chars += len(name)
                    if chars > MAX_CHARS:
                        full = True
                        break
                    names.append(name)
                    if len(names) >= MAX_ENTRIES:
                        full = True
                        break
                hint = result.get("ttlMs")
                if isinstance(hint, int | float) and not isinstance(hint, bool):
                    ttl = hint if ttl is None else min(ttl, hint)
                if full:
                    log.warning("upstream %s for one principal reached %d entries or %d "
                                "characters: the rest is not read", method, MAX_ENTRIES, MAX_CHARS)
                    break
                cursor = result.get("nextCursor")
                if not isinstance(cursor, str) or not cursor:
                    break
        except McpError as exc:
            raise passed_on(exc) from None
        except RequestTimeout:
            raise McpError(UNAVAILABLE, "upstream did not answer in time") from None
        except (ClientError, OSError):
            raise McpError(UNAVAILABLE, "upstream unavailable") from None
        finally:
            CALLER.reset(caller)
        return self.clock() + max(0.0, ttl or 0.0) / 1000.0, names


def adopter(server: Any, link: Upstream) -> Callable[[str, list[dict[str, Any]]], list[str]]:
    """The `adopt` of `PerCaller` for a proxy `server`: registers a relay for each listed entry
    the proxy does not serve yet, as its own listing would (gateway/proxy_components.py)."""
    from ..client.errors import ProtocolError
    from ..client.types import Prompt, Resource, ResourceTemplate, Tool, convert
    from .proxy_components import _add_prompt, _add_resource, _add_tool, _drop_none

    def adopt(method: str, entries: list[dict[str, Any]]) -> list[str]:
        _, field, registry_name = SHAPE[method]
        registry = getattr(server, registry_name)
        kind = "resources" if registry_name == "templates" else registry_name
        done: list[str] = []
        for raw in entries:
            name = raw.get(field)
            if not isinstance(name, str) or name in registry:
                continue
            try:
                if method == "tools/list":
                    _add_tool(server, link, convert(raw, Tool, method))
                elif method == "prompts/list":
                    _add_prompt(server, link, convert(raw, Prompt, method))
                elif method == "resources/list":
                    r = convert(raw, Resource, method)
                    _add_resource(server, link, r.uri, _drop_none({
                        "name": r.name, "title": r.title, "description": r.description,
                        "mime_type": r.mime_type, "size": r.size, "annotations": r.annotations,
                        "icons": r.icons, "meta": r.meta}))
                else:
                    t = convert(raw, ResourceTemplate, method)
                    _add_resource(server, link, t.uri_template, _drop_none({
                        "name": t.name, "title": t.title, "description": t.description,
                        "mime_type": t.mime_type, "annotations": t.annotations,
                        "icons": t.icons, "meta": t.meta}))
            except ProtocolError:
                continue  # a malformed entry is not served, as in the proxy's own listing
            # Not the proxy's own listing's: its relisting does not drop it.
            link.registered[kind].discard(name)
            if name in registry:
                done.append(name)
        return done

    return adopt
