"""The server `rondo proxy` serves: a `proxy(...)` built from `RONDO_PROXY` (JSON), or for
`rondo gateway` a `from_mcp_json(...)` of the file it names, so that
`rondo run`'s machinery (stdio, `--http`, workers that import the app anew) serves it as any
server file. Loaded by path, never imported by the package."""

from __future__ import annotations

import json
import os
from typing import Any

from rondo.gateway.proxy import PROXY_ENV as ENV
from rondo.gateway.proxy import proxy

_text = os.environ.get(ENV)
if not _text:
    raise SystemExit(f"rondo proxy: {ENV} is not set (run `rondo proxy UPSTREAM`)")
_config = json.loads(_text)


def _bridge(spec: dict[str, Any] | None) -> object:
    if not spec:
        return None
    from rondo.gateway.bridge import Hold, Replay

    if spec["mode"] == "hold":
        return Hold(timeout=float(spec["hold_timeout"]), max_held=int(spec["max_held"]),
                    processes=int(spec.get("processes", 8)))
    return Replay(max_rounds=int(spec["max_rounds"]), processes=int(spec.get("processes", 8)))


if "mcp_json" in _config:  # `rondo gateway`: the file is read again here, in each worker
    from rondo.gateway.config import from_mcp_json

    server = from_mcp_json(_config["mcp_json"], name=_config.get("name", "rondo-gateway"),
                           upstream_protocol=_config.get("upstream_protocol"),
                           bridge=_bridge(_config.get("bridge")))
else:
    server = proxy(
        _config["upstream"],
        name=_config.get("name", "rondo-proxy"),
        headers=_config.get("headers") or None,
        timeout=_config.get("timeout", 30.0),
        upstream_protocol=_config.get("upstream_protocol"),
        bridge=_bridge(_config.get("bridge")),
        transport=_config.get("transport"),
    )
