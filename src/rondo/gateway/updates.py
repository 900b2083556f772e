"""The upstream's `notifications/resources/updated`, relayed to the proxy's subscribers.

A downstream client subscribes (`resources/subscribe` on 2025-11-25, `resourceSubscriptions`
of `subscriptions/listen` on 2026-07-28); the proxy then subscribes upstream to that URI once
(`resources/subscribe` on a 2025-11-25 upstream's session, a `subscriptions/listen` stream it
reopens with the URIs so far on a 2026-07-28 upstream), and each update the upstream sends goes
to `Server.notify_resource_updated`, which tells the proxy's subscribers on either era.

Downstream subscribers are counted per URI: a 2025-11-25 session (until it unsubscribes or
closes) and each 2026-07-28 listen stream (while it lasts). When the last one goes, the proxy
unsubscribes upstream (`resources/unsubscribe`, or the listen stream reopened without the URI).
A 2026-07-28 upstream's stream is reopened make-before-break (`follow_listen`): the old stream
closes `GRACE` seconds after the new one is acknowledged, so an update sent meanwhile reaches
one of them, even one sent on the old stream just before the new one was registered and still
on its way (it may reach both: an update says "read again", so twice is harmless). At most `MAX_WATCHED` URIs
are subscribed upstream at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..client import ClientError
from ..server.method import Wrap
from ..wire.errors import McpError
from .chain import Chained
from .quiet import Quiet

if TYPE_CHECKING:
    from ..core.core import Core
    from ..server.method import Handler
    from ..server.request import Request
    from ..server.server import Server
    from .upstream import Upstream

MAX_WATCHED = 1024  # URIs one upstream is subscribed to at most
# Seconds a replaced listen stream stays open after its successor is acknowledged: an update
# the upstream sent on it just before may still be on its way (another connection).
GRACE = 1.0
log = logging.getLogger("rondo.gateway")
_LISTS = {"notifications/tools/list_changed": "tools",
          "notifications/prompts/list_changed": "prompts",
          "notifications/resources/list_changed": "resources"}


def _always(core: Core, params: Mapping[str, Any]) -> bool:
    return True


class ResourceWatch(Chained, Quiet):
    """Wraps the two downstream ways to subscribe: each URI is subscribed upstream first."""

    name = "dev.rondo/proxy-updates"

    def __init__(self, link: Upstream) -> None:
        self.link = link
        self.server: Server | None = None
        # Who holds each URI downstream: 2025-11-25 sessions, 2026-07-28 listen streams.
        self.holders: dict[str, set[Any]] = {}
        self._tracked: set[Any] = set()  # 2025-11-25 sessions whose on_close is chained
        self._closing: set[asyncio.Task[None]] = set()

    def attach(self, server: Server) -> None:
        self.server = server  # the proxy's own: what it serves says which URIs are its upstream's

    def serves(self, uri: str) -> bool:
        """Is `uri` one of this proxy's (mounted beside other proxies, each watches its own)?"""
        server = self.server
        if server is None or uri in server.resources:
            return True
        return any(t.template is not None and t.template.match(uri) is not None
                   for t in server.templates.values())

    def wraps(self) -> Iterable[Wrap]:
        return [Wrap("resources/subscribe", self._subscribe, suspends=_always),
                Wrap("resources/unsubscribe", self._unsubscribe, suspends=_always),
                Wrap("subscriptions/listen", self._listen, suspends=_always)]

    async def hold(self, uri: str, holder: Any) -> None:
        """`holder` subscribed to `uri` downstream: subscribed upstream unless already."""
        if uri not in self.holders and len(self.holders) >= MAX_WATCHED:
            return
        self.holders.setdefault(uri, set()).add(holder)
        await self.link.watch(uri)

    async def release(self, uri: str, holder: Any) -> None:
        """`holder` no longer subscribes to `uri`: the last one gone, unsubscribed upstream."""
        held = self.holders.get(uri)
        if held is None or holder not in held:
            return
        held.discard(holder)
        if not held:
            del self.holders[uri]
            await unwatch(self.link, uri)

    async def _subscribe(self, core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
        uri = req.params.get("uri")
        session = getattr(req.call, "session", None)
        if isinstance(uri, str) and uri and session is not None and self.serves(uri):
            self._track(session)
            await self.hold(uri, session)
        return await call_next(core, req)

    async def _unsubscribe(self, core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
        result = await call_next(core, req)
        uri = req.params.get("uri")
        session = getattr(req.call, "session", None)
        if isinstance(uri, str) and session is not None:
            await self.release(uri, session)
        return result

    def _track(self, session: Any) -> None:
        """Release what a 2025-11-25 session holds when it closes (its `on_close`, chained)."""
        if session in self._tracked:
            return  # chained already, at its first subscription (once, however often it
            # unsubscribes and subscribes again: the chain does not grow)
        self._tracked.add(session)
        before = session.on_close

        def closed(ended: Any) -> None:
            self._tracked.discard(session)
            try:
                if before is not None:
                    before(ended)
            finally:
                task = asyncio.ensure_future(self._released(ended))
                self._closing.add(task)
                task.add_done_callback(self._closing.discard)

        session.on_close = closed

    async def _released(self, session: Any) -> None:
        await self._release_all([uri for uri, held in self.holders.items() if session in held],
                                session)

    async def _listen(self, core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
        wanted = req.params.get("notifications")
        uris = wanted.get("resourceSubscriptions") if isinstance(wanted, Mapping) else None
        held: list[str] = []
        stream = object()  # this listen stream, as a holder
        try:
            if isinstance(uris, list):
                for uri in dict.fromkeys(uris[:MAX_WATCHED]):
                    if isinstance(uri, str) and uri and self.serves(uri):
                        held.append(uri)
                        await self.hold(uri, stream)
            return await call_next(core, req)
        finally:
            if held:  # in a task of its own: this request may be ending by cancellation
                task = asyncio.ensure_future(self._release_all(held, stream))
                self._closing.add(task)
                task.add_done_callback(self._closing.discard)

    async def _release_all(self, uris: list[str], holder: Any) -> None:
        for uri in uris:
            await self.release(uri, holder)


async def unwatch(link: Upstream, uri: str) -> None:
    """No downstream subscriber holds `uri` any more: unsubscribe upstream."""
    if uri not in link.watched:
        return
    link.watched.discard(uri)
    client = link.client
    if client is None:
        return
    if client.era == "legacy":
        try:
            await client.request("resources/unsubscribe", {"uri": uri})
        except (ClientError, McpError, OSError) as exc:
            log.warning("upstream %s: cannot unsubscribe from a resource: %s", link.identity,
                        type(exc).__name__)
    elif link.rewatch is not None:
        link.rewatch.set()  # the follower reopens its listen stream without this URI


async def follow_listen(link: Upstream, client: Any, wanted: list[str],
                        redo: Callable[[str], Awaitable[None]]) -> None:
    """A 2026-07-28 upstream's list changes and resource updates on one listen stream, opened
    again whenever the URIs to watch change: the old stream closes `GRACE` seconds after the
    new one is acknowledged. Returns when a stream ends or cannot be opened."""
    current: tuple[Any, asyncio.Task[None]] | None = None
    closing: set[asyncio.Task[None]] = set()
    try:
        while True:
            rewatch = link.rewatch = asyncio.Event()
            if not wanted and not link.watched:
                await _closed(current)
                current = None
                await rewatch.wait()
                continue
            stream = client.listen(tools="tools" in wanted, prompts="prompts" in wanted,
                                   resources="resources" in wanted,
                                   resource_uris=sorted(link.watched))
            try:
                await stream.__aenter__()
            except (ClientError, McpError, OSError) as exc:
                log.warning("upstream %s: list changes not followed: %s", link.identity, exc)
                return
            old, current = current, (stream, asyncio.ensure_future(_consume(stream, redo)))
            if old is not None:  # only now, and after a grace: what the upstream sent on the
                # old stream before the new one was registered may still be on its way
                task = asyncio.ensure_future(_closed(old, after=GRACE))
                closing.add(task)
                task.add_done_callback(closing.discard)
            waiter = asyncio.ensure_future(rewatch.wait())
            try:
                await asyncio.wait({current[1], waiter}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
            reader = current[1]
            if reader.done():  # the stream ended (or failed): the supervisor takes over
                if not reader.cancelled() and reader.exception() is not None:
                    log.warning("upstream %s: list changes not followed: %s", link.identity,
                                reader.exception())
                return
    finally:
        for task in list(closing):
            task.cancel()  # closes its stream at once (`_closed`'s finally)
        await _closed(current)


async def _consume(stream: Any, redo: Callable[[str], Awaitable[None]]) -> None:
    async for note in stream:  # resource updates reach `Upstream._heard` (on_notification)
        what = _LISTS.get(str(note.get("method")))
        if what is not None:
            await redo(what)


async def _closed(current: tuple[Any, asyncio.Task[None]] | None, *, after: float = 0.0) -> None:
    """End a listen stream (after `after` seconds: cancelled meanwhile, at once)."""
    if current is None:
        return
    stream, reader = current
    try:
        if after:
            await asyncio.sleep(after)
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await reader
        with contextlib.suppress(Exception):
            await stream.__aexit__(None, None, None)
