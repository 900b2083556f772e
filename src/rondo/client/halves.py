"""Client halves of extensions, found through the `rondo.client_halves` entry point group.

A package that ships a client half registers its module by the name the `Client` knows it by:

    [project.entry-points."rondo.client_halves"]
    tasks = "some.package.client"

`Client(tasks=True)`, `client.task(id)` and `client.start_tool(...)` load the `tasks` half
here, on first use only: a client that asks for none never reads package metadata.
"""

from __future__ import annotations

from types import ModuleType

GROUP = "rondo.client_halves"


def client_half(name: str) -> ModuleType:
    """The module registered as client half `name` (raises if no package registers one)."""
    from importlib.metadata import entry_points

    for point in entry_points(group=GROUP, name=name):
        module: ModuleType = point.load()
        return module
    raise RuntimeError(f"no package registers a client half named {name!r} (entry point group "
                       f"{GROUP!r}); reinstall rondo so its entry points are registered "
                       "(bash scripts/setup.sh --python)")
