"""The change bus: how `list_changed` and `resources/updated` reach listeners on every worker.

A server without a bus delivers changes to the listen streams and legacy sessions of its own
process. With one (`use_bus(server, bus)`), `server.notify_*` publishes to the bus and the bus
delivers each change to every attached worker, the publishing one included, through
`Subscriptions.deliver(kind, payload)`. Kinds are `"list_changed"` (payload `"tools"`,
`"prompts"` or `"resources"`) and `"resource_updated"` (payload the URI).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..server.server import Server

Deliver = Callable[[str, str], None]

KINDS = ("list_changed", "resource_updated")
LISTS = ("tools", "prompts", "resources")
MAX_PAYLOAD = 8192  # a URI longer than this is not a change worth fanning out


@runtime_checkable
class Bus(Protocol):
    """What a bus does. `start`/`stop` run on the serving event loop (ASGI lifespan)."""

    def attach(self, deliver: Deliver) -> None:
        """Where changes arriving on this worker go (called once, before `start`)."""

    def publish(self, kind: str, payload: str) -> None:
        """Send one change to every worker; may be called from any thread."""

    async def start(self) -> None:
        """Be subscribed before returning: a change published after this is not missed."""

    async def stop(self) -> None: ...


def check_change(kind: Any, payload: Any) -> bool:
    """Whether (kind, payload) is a change a bus may deliver (anything else is dropped)."""
    if kind == "list_changed":
        return payload in LISTS
    if kind == "resource_updated":
        return isinstance(payload, str) and 0 < len(payload) <= MAX_PAYLOAD
    return False


class MemoryBus:
    """One process, several servers (or one): every attached worker gets every change.

    Delivery is synchronous, in the publishing thread, as a server without a bus does it.
    """

    def __init__(self) -> None:
        self._targets: list[Deliver] = []

    def attach(self, deliver: Deliver) -> None:
        self._targets.append(deliver)

    def publish(self, kind: str, payload: str) -> None:
        if not check_change(kind, payload):
            raise ValueError(f"not a change a bus carries: {kind!r}")
        for deliver in tuple(self._targets):
            deliver(kind, payload)

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None


def use_bus(server: Server, bus: Bus) -> Bus:
    """Route this server's change notifications (both eras) through `bus`."""
    if not isinstance(bus, Bus):
        raise TypeError("bus must have attach(), publish(), start() and stop()")
    subscriptions = server.core.subscriptions
    if subscriptions.bus is not None:
        raise ValueError(f"server {server.name!r} already has a bus")
    bus.attach(subscriptions.deliver)
    subscriptions.bus = bus
    return bus
