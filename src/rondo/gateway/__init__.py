"""rondo.gateway: servers composed into one (`mount`), and other MCP servers served through
rondo (`proxy`, its legacy bridge `Hold`/`Replay`). docs/gateway.md. Names load on first use: mounting never imports the client."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..wire.lazy import lazy_exports

_EXPORTS = {
    "Hold": "rondo.gateway.bridge.relay",
    "Replay": "rondo.gateway.bridge.relay",
    "SEPARATOR": "rondo.gateway.mount",
    "Mount": "rondo.gateway.mount",
    "mount": "rondo.gateway.mount",
    "proxy": "rondo.gateway.proxy",
}

if TYPE_CHECKING:
    from .bridge.relay import Hold as Hold
    from .bridge.relay import Replay as Replay
    from .mount import SEPARATOR as SEPARATOR
    from .mount import Mount as Mount
    from .mount import mount as mount
    from .proxy import proxy as proxy

__getattr__ = lazy_exports("rondo.gateway", globals(), _EXPORTS)

__all__ = ["SEPARATOR", "Hold", "Mount", "Replay", "mount", "proxy"]
