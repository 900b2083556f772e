"""MCP Apps (`io.modelcontextprotocol/ui`): tools that come with an interactive HTML view.

    apps = server.extension(rondo.apps.Apps())
    table = apps.view("ui://orders/table", html=rondo.apps.page(...))

    @apps.tool(view=table)
    def orders() -> list[dict]: ...

See docs/apps.md.
"""

from .extension import Apps
from .meta import (
    EXTENSION,
    LEGACY_RESOURCE_URI,
    MIME_TYPE,
    AppsError,
    Csp,
    Permissions,
    ToolLink,
    ViewMeta,
    supports,
    tool_visibility,
)
from .pages import page
from .view import MAX_BYTES, View

__all__ = ["EXTENSION", "LEGACY_RESOURCE_URI", "MAX_BYTES", "MIME_TYPE", "Apps", "AppsError",
           "Csp", "Permissions", "ToolLink", "View", "ViewMeta", "page", "supports",
           "tool_visibility"]
