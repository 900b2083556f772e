"""`rondo proxy UPSTREAM [--header 'Name: value'] [--timeout S] [--upstream-protocol V]
[--name N] [rondo run's flags]`: serve another MCP server through rondo (docs/gateway.md).

UPSTREAM is an http(s) URL or a command line in one argument (`"python server.py"`). Every
other flag is `rondo run`'s (`--http [HOST:]PORT`, `--workers`, `--allowed-hosts`...), so the
proxy is served, checked and deployed as a server file is."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any


def _header(text: str) -> tuple[str, str]:
    name, sep, value = text.partition(":")
    if not sep or not name.strip() or any(c in name for c in " \t\r\n") or "\n" in value:
        raise argparse.ArgumentTypeError(f"expected 'Name: value', got {text!r}")
    return name.strip(), value.strip()


def _timeout(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--timeout needs seconds, got {text!r}") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError("--timeout must be more than 0 and at most 3600 seconds")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="rondo proxy",
        description="Serve another MCP server through rondo: both eras downstream, input rounds "
                    "relayed statelessly. Other flags are `rondo run`'s (--http, --workers, "
                    "--allowed-hosts, ...; `rondo run -h`).")
    p.add_argument("upstream", help="an http(s) URL, or a command line in one argument")
    p.add_argument("--header", type=_header, action="append", default=[], metavar="'NAME: VALUE'",
                   help="a header sent upstream (the proxy's own credential; repeatable). "
                        "Never the client's: its Authorization is not forwarded")
    p.add_argument("--timeout", type=_timeout, default=30.0,
                   help="seconds each upstream request may take (default 30)")
    p.add_argument("--upstream-protocol", metavar="VERSION",
                   help="pin the upstream's protocol version (default: negotiated)")
    p.add_argument("--name", default="rondo-proxy", help="the proxy's server name")
    return p


def proxy_command(argv: list[str]) -> int:
    args, rest = parser().parse_known_args(argv)
    upstream: Any = args.upstream
    if not upstream.startswith(("http://", "https://")):
        upstream = shlex.split(upstream)
        if not upstream:
            print("rondo proxy: UPSTREAM is empty", file=sys.stderr)
            return 2
    from ..gateway.proxy import PROXY_ENV

    os.environ[PROXY_ENV] = json.dumps({
        "upstream": upstream, "name": args.name, "headers": dict(args.header),
        "timeout": args.timeout, "upstream_protocol": args.upstream_protocol,
    })
    from ..fleet.run import run_command

    app = Path(__file__).resolve().parent.parent / "gateway" / "served.py"
    return run_command([f"{app}:server", *rest])
