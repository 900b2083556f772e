"""`rondo proxy UPSTREAM [--header 'Name: value'] [--timeout S] [--upstream-protocol V]
[--bridge hold|replay [--hold-timeout S] [--max-held N] [--max-rounds N]] [--name N]
[rondo run's flags]`: serve another MCP server through rondo (docs/gateway.md).

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
        # The value is not echoed: a header given here is usually a credential.
        raise argparse.ArgumentTypeError("expected 'Name: value' (a header name without spaces, "
                                         "a colon, its value on one line)")
    return name.strip(), value.strip()


def _seconds(flag: str, most: float) -> Any:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} needs seconds, got {text!r}") from None
        if not 0 < value <= most:
            raise argparse.ArgumentTypeError(
                f"{flag} must be more than 0 and at most {most:g} seconds")
        return value

    return parse


_timeout = _seconds("--timeout", 3600)


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
    p.add_argument("--bridge", choices=("hold", "replay"),
                   help="serve a 2025-11-25 upstream's mid-call questions (elicitation, "
                        "sampling, roots) to 2026-07-28 clients as input rounds: hold the "
                        "upstream call open in this process, or replay it each round "
                        "(default: refused)")
    p.add_argument("--hold-timeout", type=_seconds("--hold-timeout", 86400), default=300.0, metavar="S",
                   help="--bridge hold: seconds a held call waits for the client's retry "
                        "(default 300)")
    p.add_argument("--max-held", type=_count, default=1000, metavar="N",
                   help="--bridge hold: calls held at once before new ones are refused "
                        "(default 1000)")
    p.add_argument("--max-rounds", type=_count, default=16, metavar="N",
                   help="--bridge replay: input rounds one call may take (default 16)")
    p.add_argument("--bridge-processes", type=_processes, default=8, metavar="N",
                   help="--bridge with a stdio upstream: its processes for bridged calls, one "
                        "call each at a time (default 8, at most 256)")
    p.add_argument("--transport", choices=("http", "sse"), default=None,
                   help="how to reach an upstream URL: Streamable HTTP (default) or the "
                        "2024-11-05 HTTP+SSE transport (the URL is its SSE endpoint)")
    p.add_argument("--name", default="rondo-proxy", help="the proxy's server name")
    return p


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 0 < value <= 1_000_000:
        raise argparse.ArgumentTypeError("expected a number from 1 to 1000000")
    return value


def _processes(text: str) -> int:
    value = _count(text)
    if value > 256:
        raise argparse.ArgumentTypeError("expected a number from 1 to 256")
    return value


def _workers(rest: list[str]) -> int:
    """The `--workers N` among `rondo run`'s flags (1 when absent or unreadable: run checks it)."""
    for i, arg in enumerate(rest):
        value = arg.partition("=")[2] if arg.startswith("--workers=") else (
            rest[i + 1] if arg == "--workers" and i + 1 < len(rest) else None)
        if value is not None:
            try:
                return int(value)
            except ValueError:
                return 1
    return 1


def _redis(rest: list[str]) -> bool:
    """Whether `rondo run`'s flags (or its environment) give the fleet a Redis."""
    from ..fleet.run import ENV_REDIS

    return bool(os.environ.get(ENV_REDIS)) or any(
        arg == "--redis" or arg.startswith("--redis=") for arg in rest)


def proxy_command(argv: list[str]) -> int:
    args, rest = parser().parse_known_args(argv)
    upstream: Any = args.upstream
    if not upstream.startswith(("http://", "https://")):
        if args.transport is not None:
            print("rondo proxy: --transport goes with an upstream URL", file=sys.stderr)
            return 2
        upstream = shlex.split(upstream)
        if not upstream:
            print("rondo proxy: UPSTREAM is empty", file=sys.stderr)
            return 2
    if args.bridge == "hold" and _workers(rest) > 1 and not _redis(rest):
        print("rondo proxy: --bridge hold keeps each held call in the process that began it, and "
              "--workers N shares one address, so a retry would reach a random worker: give the "
              "workers a bus (--redis URL) to forward retries to the holder, or use --bridge "
              "replay, or one worker per address", file=sys.stderr)
        return 2
    from ..gateway.proxy import PROXY_ENV

    os.environ[PROXY_ENV] = json.dumps({
        "upstream": upstream, "name": args.name, "headers": dict(args.header),
        "timeout": args.timeout, "upstream_protocol": args.upstream_protocol,
        "transport": args.transport,
        "bridge": args.bridge and {"mode": args.bridge, "hold_timeout": args.hold_timeout,
                                   "max_held": args.max_held, "max_rounds": args.max_rounds,
                                   "processes": args.bridge_processes},
    })
    from ..fleet.run import run_command

    app = Path(__file__).resolve().parent.parent / "gateway" / "served.py"
    return run_command([f"{app}:server", *rest])
