"""Default extensions of tool options, from the `rondo.tool_options` entry point group
(`task = "rondo_pkg:Factory"` in a package's `[project.entry-points."rondo.tool_options"]`).

Read only when a tool uses an option (`@server.tool(task=...)`) that no installed extension
lists in its `tool_options`: a server that never does reads no package metadata.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import Server

GROUP = "rondo.tool_options"
TOOL_OPTIONS = ("task",)  # the `Tool` attributes an extension may serve


def defaults_for(server: Server) -> list[Any]:
    """The default extension of each option `server`'s tools use and none installed serves,
    made; an option nothing registers a default for fails here, at start-up."""
    served = {o for extension in server.extensions.values() for o in getattr(extension, "tool_options", ())}
    users = {o: sorted(n for n, t in server.tools.items() if getattr(t, o, None) is not None) for o in TOOL_OPTIONS}
    wanted = [o for o in TOOL_OPTIONS if users[o] and o not in served]
    if not wanted:
        return []
    return [default_of(option, users[option][0]) for option in wanted]


def default_of(option: str, tool: str | None = None) -> Any:
    """The default extension registered for tool option `option`, made: what `settle()`
    installs, and what an extension that serves the option for others (the gateway's tasks
    hub) runs a server's own tools with. RuntimeError when no package registers one."""
    from importlib.metadata import entry_points

    registered = {point.name: point for point in entry_points(group=GROUP)}
    if option not in registered:
        raise RuntimeError(
            f"tool {tool or '?'!r} uses {option}=, which no installed extension serves and no "
            f"package registers a default for ({GROUP!r} entry points): install one with "
            "server.extension(...), or reinstall rondo (bash scripts/setup.sh --python)")
    return registered[option].load()()
