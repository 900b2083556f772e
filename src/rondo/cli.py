"""`rondo run` serves a server file; `rondo call` is a terminal client; `rondo keys` checks a
fleet's state keys."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any


def load_server(target: str) -> Any:
    """Load `path/to/app.py[:name]` and return the server object in it."""
    from .server.server import Server

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


def run_command(argv: list[str]) -> int:
    from .fleet.run import run_command as run

    return run(argv)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: rondo run APP.py[:SERVER] [--http [HOST:]PORT] [--workers N] ...\n"
              "       rondo call TARGET [TOOL] [JSON] [--answers FILE]\n"
              "       rondo keys check URL... | rondo keys new [ID]")
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "run":
        return run_command(rest)
    if command == "call":
        from .client.terminal import main as call_main

        return call_main(rest)
    if command == "keys":
        from .fleet.keycheck import keys_command

        return keys_command(rest)
    print(f"rondo: unknown command {command!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
