"""Benchmark anchor: FastMCP 4.x's own proxy (`create_proxy`) in front of an upstream URL, for
benchmarks/bench_proxy.py. Runs in the fastmcp anchor venv (benchmarks/.anchors/fastmcp).

    python fastmcp_proxy.py UPSTREAM_URL PORT   # HTTP on /mcp, JSON responses, stateless
"""

from __future__ import annotations

import sys

from fastmcp.server import create_proxy


def main(argv: list[str]) -> None:
    if len(argv) != 2:
        raise SystemExit("usage: fastmcp_proxy.py UPSTREAM_URL PORT")
    proxy = create_proxy(argv[0], name="bench-fastmcp-proxy")
    proxy.run("http", show_banner=False, host="127.0.0.1", port=int(argv[1]),
              log_level="warning", json_response=True, stateless_http=True)


if __name__ == "__main__":
    main(sys.argv[1:])
