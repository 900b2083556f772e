"""The upstream's `notifications/resources/updated`, relayed to the proxy's subscribers.

A downstream client subscribes (`resources/subscribe` on 2025-11-25, `resourceSubscriptions`
of `subscriptions/listen` on 2026-07-28); the proxy then subscribes upstream to that URI once
(`resources/subscribe` on a 2025-11-25 upstream's session, a `subscriptions/listen` stream it
reopens with the URIs so far on a 2026-07-28 upstream), and each update the upstream sends goes
to `Server.notify_resource_updated`, which tells the proxy's subscribers on either era. An
upstream subscription lasts as long as the connection (at most `MAX_WATCHED` URIs): the proxy
keeps no count of downstream subscribers per URI.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..server.method import Wrap
from .chain import Chained

if TYPE_CHECKING:
    from ..core.core import Core
    from ..server.method import Handler, Method
    from ..server.request import Request
    from ..server.server import Server
    from .proxy import Upstream

MAX_WATCHED = 1024  # URIs one upstream is subscribed to at most


def _always(core: Core, params: Mapping[str, Any]) -> bool:
    return True


class ResourceWatch(Chained):
    """Wraps the two downstream ways to subscribe: each URI is subscribed upstream first."""

    name = "dev.rondo/proxy-updates"

    def __init__(self, link: Upstream) -> None:
        self.link = link
        self.server: Server | None = None

    def attach(self, server: Server) -> None:
        self.server = server  # the proxy's own: what it serves says which URIs are its upstream's

    def serves(self, uri: str) -> bool:
        """Is `uri` one of this proxy's (mounted beside other proxies, each watches its own)?"""
        server = self.server
        if server is None or uri in server.resources:
            return True
        return any(t.template is not None and t.template.match(uri) is not None
                   for t in server.templates.values())

    def capability(self, server: Server) -> Mapping[str, Any] | None:
        return None

    def methods(self) -> Iterable[Method]:
        return []

    def wraps(self) -> Iterable[Wrap]:
        return [Wrap("resources/subscribe", self._subscribe, suspends=_always),
                Wrap("subscriptions/listen", self._listen, suspends=_always)]

    async def _subscribe(self, core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
        uri = req.params.get("uri")
        if isinstance(uri, str) and uri and self.serves(uri):
            await self.link.watch(uri)
        return await call_next(core, req)

    async def _listen(self, core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
        wanted = req.params.get("notifications")
        uris = wanted.get("resourceSubscriptions") if isinstance(wanted, Mapping) else None
        if isinstance(uris, list):
            for uri in uris[:MAX_WATCHED]:
                if isinstance(uri, str) and uri and self.serves(uri):
                    await self.link.watch(uri)
        return await call_next(core, req)
