"""Open `subscriptions/listen` streams and the fan-out of change notifications to them."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from ..wire.meta import SUBSCRIPTION_ID

Emit = Callable[[dict[str, Any]], None]

_LIST_FLAGS = {
    "tools": "toolsListChanged",
    "prompts": "promptsListChanged",
    "resources": "resourcesListChanged",
}


class Listener:
    __slots__ = ("sub_id", "flags", "uris", "emit")

    def __init__(self, sub_id: Any, flags: frozenset[str], uris: tuple[str, ...], emit: Emit) -> None:
        self.sub_id = sub_id
        self.flags = flags
        self.uris = uris
        self.emit = emit

    def send(self, method: str, params: dict[str, Any] | None = None) -> None:
        body: dict[str, Any] = dict(params) if params else {}
        body["_meta"] = {SUBSCRIPTION_ID: self.sub_id}
        self.emit({"jsonrpc": "2.0", "method": method, "params": body})


class Subscriptions:
    """Every listener of this server, modern listen streams and legacy sessions alike."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        # Legacy sessions register plain callbacks: (kind, payload) -> None.
        self.legacy_hooks: list[Callable[[str, Any], None]] = []
        # Fleet hook: a bus (rondo.fleet) carries changes to every worker, this one included,
        # and hands them back through `deliver`. None: deliver here only.
        self.bus: Any = None

    def add(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def remove(self, listener: Listener) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

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
        for listener in tuple(self._listeners):
            if flag in listener.flags:
                listener.send(method)
        for hook in tuple(self.legacy_hooks):
            hook("list_changed", what)

    def _deliver_resource_updated(self, uri: str) -> None:
        for listener in tuple(self._listeners):
            if any(covers(sub, uri) for sub in listener.uris):
                listener.send("notifications/resources/updated", {"uri": uri})
        for hook in tuple(self.legacy_hooks):
            hook("resource_updated", uri)


def covers(subscribed: str, uri: str) -> bool:
    """A subscription covers its URI and the URIs below it (`file:///a` covers `file:///a/b`)."""
    if uri == subscribed:
        return True
    base = subscribed if subscribed.endswith("/") else subscribed + "/"
    return uri.startswith(base)
