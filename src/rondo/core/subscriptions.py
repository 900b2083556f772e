"""Open `subscriptions/listen` streams and the fan-out of change notifications to them.

Bounds (docs/limits.md): at most `max_streams` listen streams per server and
`max_per_principal` per authenticated principal (anonymous requests count only towards the
server's cap); beyond either, `subscriptions/listen` answers -32000. A fan-out to many listeners
runs in slices of `FANOUT_SLICE`, one per event-loop turn, so one change never blocks the loop
for long; each listener still gets its events in order. What a slow reader's stream may hold
is the transport's bound (HTTP: `HttpApp(max_pending=...)`; stdio writes block).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..wire.errors import SERVER_BUSY, McpError
from ..wire.meta import SUBSCRIPTION_ID

DEFAULT_MAX_STREAMS = 1000
DEFAULT_MAX_PER_PRINCIPAL = 100
FANOUT_SLICE = 256

Emit = Callable[[dict[str, Any]], None]

_LIST_FLAGS = {
    "tools": "toolsListChanged",
    "prompts": "promptsListChanged",
    "resources": "resourcesListChanged",
}


class Listener:
    __slots__ = ("sub_id", "flags", "uris", "emit", "principal", "active")

    def __init__(self, sub_id: Any, flags: frozenset[str], uris: tuple[str, ...], emit: Emit,
                 principal: str | None = None) -> None:
        self.sub_id = sub_id
        self.flags = flags
        self.uris = uris
        self.emit = emit
        self.principal = principal
        self.active = True

    def send(self, method: str, params: dict[str, Any] | None = None) -> None:
        body: dict[str, Any] = dict(params) if params else {}
        body["_meta"] = {SUBSCRIPTION_ID: self.sub_id}
        self.emit({"jsonrpc": "2.0", "method": method, "params": body})


class Subscriptions:
    """Every listener of this server, modern listen streams and legacy sessions alike."""

    def __init__(self, max_streams: int = DEFAULT_MAX_STREAMS,
                 max_per_principal: int = DEFAULT_MAX_PER_PRINCIPAL) -> None:
        for name, value in (("max_listen_streams", max_streams),
                            ("max_listen_per_principal", max_per_principal)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer")
        self.max_streams = max_streams
        self.max_per_principal = max_per_principal
        # A dict keeps insertion order and removes in O(1) (8,000 streams closing at once).
        self._listeners: dict[Listener, None] = {}
        self._per_principal: dict[str, int] = {}
        # Legacy sessions register plain callbacks: (kind, payload) -> None.
        self.legacy_hooks: list[Callable[[str, Any], None]] = []
        # Fleet hook: a bus (rondo.fleet) carries changes to every worker, this one included,
        # and hands them back through `deliver`. None: deliver here only.
        self.bus: Any = None

    def add(self, listener: Listener) -> None:
        """Register a stream, or McpError(-32000) when a cap is reached."""
        if len(self._listeners) >= self.max_streams:
            raise McpError(SERVER_BUSY, f"Too many listen streams on this server "
                                        f"({self.max_streams}): try again later")
        principal = listener.principal
        if principal is not None:
            count = self._per_principal.get(principal, 0)
            if count >= self.max_per_principal:
                raise McpError(SERVER_BUSY, f"Too many listen streams for this principal "
                                            f"({self.max_per_principal}): close one first")
            self._per_principal[principal] = count + 1
        self._listeners[listener] = None

    def remove(self, listener: Listener) -> None:
        listener.active = False
        if self._listeners.pop(listener, _MISSING) is _MISSING:
            return
        principal = listener.principal
        if principal is not None:
            left = self._per_principal.get(principal, 1) - 1
            if left > 0:
                self._per_principal[principal] = left
            else:
                self._per_principal.pop(principal, None)

    def __len__(self) -> int:
        return len(self._listeners)

    def list_changed(self, what: str) -> None:
        if self.bus is not None:
            self.bus.publish("list_changed", what)
        else:
            self.deliver("list_changed", what)

    def resource_updated(self, uri: str) -> None:
        if self.bus is not None:
            self.bus.publish("resource_updated", uri)
        else:
            self.deliver("resource_updated", uri)

    def deliver(self, kind: str, payload: str) -> None:
        """Send a change to the listeners of this process (`kind` as a bus carries it)."""
        if kind == "list_changed":
            self._deliver_list_changed(payload)
        elif kind == "resource_updated":
            self._deliver_resource_updated(payload)

    def _deliver_list_changed(self, what: str) -> None:
        flag = _LIST_FLAGS[what]
        method = f"notifications/{what}/list_changed"
        targets = [x for x in self._listeners if flag in x.flags]
        _fan_out(targets, method, None)
        for hook in tuple(self.legacy_hooks):
            hook("list_changed", what)

    def _deliver_resource_updated(self, uri: str) -> None:
        targets = [x for x in self._listeners if any(covers(sub, uri) for sub in x.uris)]
        _fan_out(targets, "notifications/resources/updated", {"uri": uri})
        for hook in tuple(self.legacy_hooks):
            hook("resource_updated", uri)


_MISSING = object()


def _fan_out(targets: list[Listener], method: str, params: dict[str, Any] | None) -> None:
    """Send to every target: the first slice now, the rest one slice per loop turn (in order,
    so a listener never sees a later event before an earlier one)."""
    first, rest = targets[:FANOUT_SLICE], targets[FANOUT_SLICE:]
    for listener in first:
        if listener.active:
            listener.send(method, params)
    if not rest:
        return
    import asyncio  # only streams need the event loop

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # called outside the loop (a thread): nothing to yield to
        for listener in rest:
            if listener.active:
                listener.send(method, params)
        return
    loop.call_soon(_fan_out, rest, method, params)


def principal_key(auth: Any) -> str | None:
    """Who a request's authentication names, for per-principal caps (None: anonymous)."""
    if auth is None:
        return None
    if isinstance(auth, str):
        return auth
    for name in ("principal", "subject", "sub", "client_id"):
        value = auth.get(name) if isinstance(auth, dict) else getattr(auth, name, None)
        if isinstance(value, str) and value:
            return value
    return None


def covers(subscribed: str, uri: str) -> bool:
    """A subscription covers its URI and the URIs below it (`file:///a` covers `file:///a/b`)."""
    if uri == subscribed:
        return True
    base = subscribed if subscribed.endswith("/") else subscribed + "/"
    return uri.startswith(base)
