"""`rondo run` serves a server file; `rondo call` is a terminal client; `rondo keys` checks a
fleet's state keys."""

from __future__ import annotations

import sys

from .fleet.loader import load_server

__all__ = ["load_server", "main"]


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
