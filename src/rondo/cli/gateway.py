"""`rondo gateway MCP.JSON [--upstream-protocol V] [--bridge hold|replay [--hold-timeout S]
[--max-held N] [--max-rounds N]] [--name N] [rondo run's flags]`: every
server of an mcp.json behind one endpoint, each under its name as namespace (docs/gateway.md).

The file is checked here first, so a configuration that cannot be served fails before anything
starts, with a message naming the server and the field (never a value: env values, headers and
URLs may hold secrets). Every other flag is `rondo run`'s (`--http [HOST:]PORT`, `--workers`,
`--allowed-hosts`...); each worker reads the file again."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .proxy import _count, _processes, _redis, _seconds, _workers


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="rondo gateway",
        description="Serve every server of an mcp.json through one rondo endpoint, each under "
                    "its name as namespace (tools as NAME_TOOL). Other flags are `rondo run`'s "
                    "(--http, --workers, --allowed-hosts, ...; `rondo run -h`).")
    p.add_argument("config", metavar="MCP.JSON",
                   help="an mcp.json: mcpServers with command/args/env or url/headers")
    p.add_argument("--upstream-protocol", metavar="VERSION",
                   help="pin every upstream's protocol version (default: negotiated)")
    p.add_argument("--bridge", choices=("hold", "replay"),
                   help="serve every 2025-11-25 upstream's mid-call questions to 2026-07-28 "
                        "clients as input rounds (as `rondo proxy --bridge`; default: refused)")
    p.add_argument("--hold-timeout", type=_seconds("--hold-timeout", 86400), default=300.0,
                   metavar="S", help="--bridge hold: seconds a held call waits (default 300)")
    p.add_argument("--max-held", type=_count, default=1000, metavar="N",
                   help="--bridge hold: calls held at once, per upstream (default 1000)")
    p.add_argument("--max-rounds", type=_count, default=16, metavar="N",
                   help="--bridge replay: input rounds one call may take (default 16)")
    p.add_argument("--bridge-processes", type=_processes, default=8, metavar="N",
                   help="--bridge with a stdio upstream: its processes for bridged calls, one "
                        "call each at a time (default 8, at most 256)")
    p.add_argument("--name", default="rondo-gateway", help="the gateway's server name")
    return p


def gateway_command(argv: list[str]) -> int:
    args, rest = parser().parse_known_args(argv)
    from ..client.mcpjson import ConfigError
    from ..gateway.config import from_mcp_json

    path = str(Path(args.config).resolve())
    try:
        from_mcp_json(path, name=args.name, upstream_protocol=args.upstream_protocol)
        from ..client.mcpjson import load_mcp_json
        from ..gateway.bridge import Hold
        from ..gateway.config import entry_bridge

        held = [entry.name for entry in load_mcp_json(path).values()
                if isinstance(entry_bridge(entry, args.bridge), Hold)]
    except (ConfigError, ValueError) as exc:
        print(f"rondo gateway: {exc}", file=sys.stderr)
        return 2
    if held and _workers(rest) > 1 and not _redis(rest):
        why = "--bridge hold" if args.bridge == "hold" else (
            f"server {held[0]!r}'s \"bridge\": \"hold\"")
        print(f"rondo gateway: {why} keeps each held call in the process that began it, "
              "and --workers N shares one address, so a retry would reach a random worker: give "
              "the workers a bus (--redis URL) to forward retries to the holder, or use "
              "--bridge replay, or one worker", file=sys.stderr)
        return 2
    from ..gateway.proxy import PROXY_ENV

    os.environ[PROXY_ENV] = json.dumps({
        "mcp_json": path, "name": args.name, "upstream_protocol": args.upstream_protocol,
        "bridge": args.bridge and {"mode": args.bridge, "hold_timeout": args.hold_timeout,
                                   "max_held": args.max_held, "max_rounds": args.max_rounds,
                                   "processes": args.bridge_processes}})
    from ..fleet.run import run_command

    app = Path(__file__).resolve().parent.parent / "gateway" / "served.py"
    return run_command([f"{app}:server", *rest])
