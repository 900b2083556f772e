"""`from_mcp_json(config)`: every server of an mcp.json served by one `rondo.Server`.

Each entry becomes a `proxy(entry)` mounted under the entry's name as namespace, so its tools
are `<name>_<tool>` and its resources keep their URIs (gateway/mount.py). The upstreams are
connected when the gateway starts, each on its own: one that cannot be reached is logged and
tried again under the restart backoff while the others serve (`must_connect=False`); a stdio
upstream that exits is started again. A configuration that cannot be served (a bad entry, a
name that is not a namespace, `${VAR}` unset) fails here, before anything starts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..client.mcpjson import ConfigError, ServerEntry, load_mcp_json
from ..server.server import Server
from .mount import _NAMESPACE, SEPARATOR, mount
from .proxy import proxy
from .quiet import Quiet
from .supervise import Restart

__all__ = ["from_mcp_json"]


def from_mcp_json(
    config: str | os.PathLike[str] | Mapping[str, Any],
    *,
    name: str = "rondo-gateway",
    upstream_protocol: str | None = None,
    restart: Restart | None = None,
    bridge: Any = None,
    transforms: Mapping[str, Mapping[str, Any]] | None = None,
    environ: Mapping[str, str] | None = None,
    **server_options: Any,
) -> Server:
    """A `rondo.Server` serving every enabled server of `config` (a path to an mcp.json, or
    its parsed document) under its own namespace. `upstream_protocol` pins every upstream's
    era; `restart` is each upstream's backoff; `bridge` ("hold", "replay", `Hold(...)`,
    `Replay(...)`) serves every 2025-11-25 upstream's mid-call questions as input rounds;
    `transforms` gives a server's mount transforms by its name (`{"files": {"hide": ["rm"]}}`:
    `rename`, `hide`, `describe`, `tags`, `visible`, as `mount` takes them); `environ` answers `${VAR}` (default
    `os.environ`). Other keywords go to `rondo.Server` (`state=`, `auth=`...). Raises
    `rondo.client.ConfigError` for a configuration that cannot be served."""
    entries = load_mcp_json(config, environ=environ)
    if not entries:
        raise ConfigError("the mcp.json names no enabled server")
    for entry in entries.values():
        if not _NAMESPACE.fullmatch(entry.name):
            raise ConfigError(
                f"server {entry.name!r}: a gateway serves each server under its name as a "
                f"namespace, which must match [A-Za-z0-9][A-Za-z0-9.-]* (at most 64 "
                f"characters, no '{SEPARATOR}'); rename it in the mcp.json")
    unknown = sorted(set(transforms or {}) - set(entries))
    if unknown:
        raise ConfigError(f"transforms= names {unknown[0]!r}, which is not an enabled server "
                          "of the mcp.json")
    if server_options.get("state", ...) is None:
        raise ValueError("a gateway seals its upstreams' request state: state=None is refused")
    server_options.setdefault("warn_undocumented", False)
    parent = Server(name, **server_options)
    # Every upstream can bring tools, prompts and resources, now or after it comes up: a client
    # that initializes while they are all down must still list them and hear them arrive.
    parent.advertise("tools", "prompts", "resources")
    children: list[Server] = []
    bridged = False
    for entry in entries.values():
        mode = entry_bridge(entry, bridge)
        bridged = bridged or mode is not None
        child = proxy(entry, name=entry.name, upstream_protocol=upstream_protocol,
                      restart=restart, bridge=mode, must_connect=False, warn_undocumented=False)
        mount(parent, child, namespace=entry.name, **dict((transforms or {}).get(entry.name, {})))
        children.append(child)
    if bridged:
        parent.extension(_UpstreamFleet(children))
    return parent


def entry_bridge(entry: ServerEntry, default: Any) -> Any:
    """The bridge of one entry: its own `"bridge"` key ("hold", "replay", "none") over the
    gateway's `bridge=`. A mode named by the entry takes the gateway's tuning when `bridge=`
    is an instance of that mode (`Hold(timeout=60)` for `"hold"`), else that mode's defaults."""
    if entry.bridge == "none" or (entry.bridge is None and default is None):
        return None
    from .bridge.relay import Hold, Replay, bridge_mode

    given = bridge_mode(default)  # "hold" -> Hold(); a bad value is a ValueError
    if entry.bridge is None:
        return given
    wanted = Hold if entry.bridge == "hold" else Replay
    return given if isinstance(given, wanted) else wanted()


class _UpstreamFleet(Quiet):
    """Hands `rondo run --redis`'s Redis to each mounted proxy's own fleet hooks (a hold
    bridge's retry forwarding): `connect_redis` reaches the parent's extensions only, and the
    proxies are mounted, not the served server. Advertises nothing, adds no method."""

    name = "dev.rondo/gateway-upstream-fleet"

    def __init__(self, children: list[Server]) -> None:
        self._children = children

    def use_redis(self, url: str) -> None:
        for child in self._children:
            for extension in child.extensions.values():
                hook = getattr(extension, "use_redis", None)
                if hook is not None:
                    hook(url)
