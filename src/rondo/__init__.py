"""rondo: MCP servers and clients built around the stateless 2026-07-28 revision.

Names are imported on first use, so `import rondo` stays cheap for stdio servers that hosts
spawn on demand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .wire.lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "Server": "rondo.server.server",
    "Context": "rondo.server.context",
    "InputRequired": "rondo.mrtr.result",
    "McpError": "rondo.wire.errors",
    "StatePolicy": "rondo.state",
    "ToolError": "rondo.server.content",
    "ToolResult": "rondo.server.content",
    "Client": "rondo.client",
    "proxy": "rondo.gateway.proxy",
}
_MODULES = {
    "elicit", "sampling", "roots", "state", "content", "kinds", "legacy", "testing", "auth",
    "tasks", "middleware", "paths", "gateway",
}

if TYPE_CHECKING:
    from . import auth as auth
    from . import content as content
    from . import elicit as elicit
    from . import gateway as gateway
    from . import kinds as kinds
    from . import legacy as legacy
    from . import middleware as middleware
    from . import paths as paths
    from . import roots as roots
    from . import sampling as sampling
    from . import state as state
    from . import tasks as tasks
    from . import testing as testing
    from .client import Client as Client
    from .gateway.proxy import proxy as proxy
    from .mrtr.result import InputRequired as InputRequired
    from .server.content import ToolError as ToolError
    from .server.content import ToolResult as ToolResult
    from .server.context import Context as Context
    from .server.server import Server as Server
    from .state import StatePolicy as StatePolicy
    from .wire.errors import McpError as McpError


__getattr__ = lazy_exports("rondo", globals(), _EXPORTS, _MODULES)


__all__ = [*_EXPORTS, *sorted(_MODULES)]
