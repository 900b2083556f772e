"""rondo.gateway: servers composed into one (`mount`), other MCP servers served through
rondo (`proxy`, its legacy bridge `Hold`/`Replay`, its stdio upstreams kept running under
`Restart`), and every server of an mcp.json behind one (`from_mcp_json`). docs/gateway.md.
Names load on first use: mounting never imports the client."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..wire.lazy import lazy_exports

# Eager, and bound here: `mount` names both a module and its function, and a lazy export would
# lose to the module attribute that importing `rondo.gateway.mount` (config.py does) sets.
from .mount import SEPARATOR, Mount, mount

_EXPORTS = {
    "Hold": "rondo.gateway.bridge.relay",
    "Replay": "rondo.gateway.bridge.relay",
    "Restart": "rondo.gateway.supervise",
    "from_mcp_json": "rondo.gateway.config",
    "proxy": "rondo.gateway.proxy",
    "tags": "rondo.gateway.transform",
}

if TYPE_CHECKING:
    from .bridge.relay import Hold as Hold
    from .bridge.relay import Replay as Replay
    from .config import from_mcp_json as from_mcp_json
    from .proxy import proxy as proxy
    from .supervise import Restart as Restart
    from .transform import tags as tags

__getattr__ = lazy_exports("rondo.gateway", globals(), _EXPORTS)

__all__ = ["SEPARATOR", "Hold", "Mount", "Replay", "Restart", "from_mcp_json", "mount", "proxy", "tags"]
