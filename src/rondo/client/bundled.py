"""The client halves of extensions rondo bundles, by the name the `Client` knows them by.

The one module of the client layer that names an extension's package: `Client(tasks=True)`,
`client.task(id)` and `client.start_tool(...)` load the tasks client half from here, only
when used.
"""

from __future__ import annotations

import importlib
from types import ModuleType

BUNDLED = {"tasks": "rondo.tasks.client"}


def bundled(name: str) -> ModuleType:
    return importlib.import_module(BUNDLED[name])
