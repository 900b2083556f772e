"""rondo.gateway: servers composed into one (`mount`), and other MCP servers served through
rondo (`proxy`). docs/gateway.md."""

from __future__ import annotations

from .mount import SEPARATOR, Mount, mount

__all__ = ["SEPARATOR", "Mount", "mount"]
