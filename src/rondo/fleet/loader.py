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
    found = {name: v for name, v in vars(module).items() if isinstance(v, Server)}
    if attr:
        server = getattr(module, attr, None)
        if not isinstance(server, Server):
            raise SystemExit(f"rondo: {path_text} has no rondo.Server named {attr!r}; "
                             + _candidates(path_text, found))
        return server
    if len({id(v) for v in found.values()}) == 1:
        return next(iter(found.values()))
    if not found:
        raise SystemExit(
            f"rondo: {path_text} defines no rondo.Server at module level. Create one there, "
            f"e.g. `server = rondo.Server(\"my-server\")`, and register your functions with "
            "@server.tool (a server built inside a function or under `if __name__ == "
            "\"__main__\":` is not seen)."
        )
    raise SystemExit(f"rondo: {path_text} defines {len(found)} servers; " + _candidates(path_text, found))


def _candidates(path_text: str, found: dict[str, Any]) -> str:
    if not found:
        return "it defines no rondo.Server at module level"
    names = ", ".join(f"{path_text}:{name}" for name in sorted(found))
    return f"pick one of: {names}"
