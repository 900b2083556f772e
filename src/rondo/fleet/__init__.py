"""Running one server as many workers: the change bus, the start-up guard, the keys check.

Imported only by `rondo run` and by servers that configure a bus, so a stdio server never pays
for it. Redis pieces live in their own module (`redis_bus`) and need `rondo[redis]`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..wire.lazy import lazy_exports

_EXPORTS = {
    "Bus": "rondo.fleet.bus",
    "MemoryBus": "rondo.fleet.bus",
    "use_bus": "rondo.fleet.bus",
    "RedisBus": "rondo.fleet.redis_bus",
    "FleetError": "rondo.fleet.guard",
    "check_fleet": "rondo.fleet.guard",
    "interactive_components": "rondo.fleet.guard",
    "key_report": "rondo.fleet.keyinfo",
}

if TYPE_CHECKING:
    from .bus import Bus as Bus
    from .bus import MemoryBus as MemoryBus
    from .bus import use_bus as use_bus
    from .guard import FleetError as FleetError
    from .guard import check_fleet as check_fleet
    from .guard import interactive_components as interactive_components
    from .keyinfo import key_report as key_report
    from .redis_bus import RedisBus as RedisBus


__getattr__ = lazy_exports("rondo.fleet", globals(), _EXPORTS)


__all__ = list(_EXPORTS)
