"""Load the server a `rondo run` target names: `path/to/app.py[:name]`."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any


def load_server(target: str) -> Any:
    """Load `path/to/app.py[:name]` and return the server object in it."""
    from ..server.server import Server

    path_text, _, attr = target.partition(":")
    path = Path(path_text)
    if not path.is_file():
        raise SystemExit(f"rondo: no such file: {path_text}")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"rondo: cannot load {path_text}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    sys.path.insert(0, str(path.parent.resolve()))
    spec.loader.exec_module(module)
    if attr:
        server = getattr(module, attr, None)
        if not isinstance(server, Server):
            raise SystemExit(f"rondo: {path_text} has no rondo.Server named {attr!r}")
        return server
    found = [v for v in vars(module).values() if isinstance(v, Server)]
    if len(found) != 1:
        raise SystemExit(
            f"rondo: {path_text} defines {len(found)} servers; name one as {path_text}:NAME"
        )
    return found[0]
