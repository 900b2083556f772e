"""`rondo run` serves a server file; `rondo call` is a terminal client (`call.py`, with the
terminal's questions in `prompts.py` and what it prints in `show.py`); `rondo keys` checks a
fleet's state keys; `rondo inspect` shows what a server file offers (`inspect.py`) and
`rondo install` puts it into an MCP host's configuration (`install.py`); `rondo proxy` serves
another MCP server through rondo (`proxy.py`), `rondo gateway` every server of an mcp.json
(`gateway.py`). `python -m rondo.cli
...` is `rondo ...`."""

from __future__ import annotations

import sys

from ..fleet.loader import load_server

__all__ = ["load_server", "main"]


def _run_command(argv: list[str]) -> int:
    from ..fleet.run import run_command as run

    return run(argv)


USAGE = """\
usage: rondo COMMAND [ARGS]

commands:
  run APP.py[:SERVER]   serve a server file over stdio (or --http [HOST:]PORT); `rondo run -h`
  call TARGET ...       a terminal client: list, call, read, get, answer questions; `rondo call -h`
  dev APP.py            a local page to try it: forms for tools and for its questions; `rondo dev -h`
  inspect APP.py        what a server file offers, without starting it; `rondo inspect -h`
  install HOST APP.py   add it to claude-desktop, claude-code, cursor, vscode, gemini or
                        mcp-json; `rondo install -h`
  proxy UPSTREAM        serve another MCP server (URL or command line) through rondo, both eras;
                        `rondo proxy -h`
  gateway MCP.JSON      serve every server of an mcp.json behind one endpoint, namespaced;
                        `rondo gateway -h`
  keys check|new        check a fleet's state keys, or print a new one; `rondo keys -h`

options:
  -h, --help            show this help and exit
  --version             print the version (distribution rondo-mcp) and exit"""


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        print(USAGE, file=sys.stderr)
        return 2
    if argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    if argv[0] in ("-V", "--version"):
        from .. import __version__

        print(f"rondo-mcp {__version__}")
        return 0
    command, rest = argv[0], argv[1:]
    if command == "run":
        return _run_command(rest)
    if command == "call":
        from .call import main as call_main

        return call_main(rest)
    if command == "dev":
        from .dev import dev_command

        return dev_command(rest)
    if command == "inspect":
        from .inspect import inspect_command

        return inspect_command(rest)
    if command == "install":
        from .install import install_command

        return install_command(rest)
    if command == "proxy":
        from .proxy import proxy_command

        return proxy_command(rest)
    if command == "gateway":
        from .gateway import gateway_command

        return gateway_command(rest)
    if command == "keys":
        from ..fleet.keycheck import keys_command

        return keys_command(rest)
    print(f"rondo: unknown command {command!r}\n\n{USAGE}", file=sys.stderr)
    return 2

