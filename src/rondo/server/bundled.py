"""The extensions rondo bundles, by the tool option that wants each.

A tool option -> (the extension serving it, "module:factory" of its default). This table is
the one place outside an extension's own package that names it: `Server.settle()` installs the
default when a tool uses the option and no extension of that name is installed. Kept apart from
`extension.py`, whose Protocol class a cold start should not pay for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import Server

BUNDLED: dict[str, tuple[str, str]] = {
    "task": ("io.modelcontextprotocol/tasks", "rondo.tasks:Tasks"),
}


def bundled_for(server: Server) -> list[Any]:
    """The default extensions `server`'s tools want and lack, made (their packages imported
    only here, only when a tool uses the option)."""
    wanted = []
    for option, (name, target) in BUNDLED.items():
        if name in server.extensions or not any(getattr(t, option, None) for t in server.tools.values()):
            continue
        module, factory = target.split(":")
        wanted.append(getattr(importlib.import_module(module), factory)())
    return wanted
