"""Benchmark fixture for the auth cost: `add`, with or without a ResourceServer.

    python benchmarks/auth_server.py http PORT                # no auth
    python benchmarks/auth_server.py http PORT ISSUER         # JWTs from ISSUER, aud = the endpoint
"""

from __future__ import annotations

import sys

import rondo


def make(port: int, issuer: str | None) -> rondo.Server:
    auth = None
    if issuer is not None:
        from rondo.auth import ResourceServer

        auth = ResourceServer(resource=f"http://127.0.0.1:{port}/mcp", issuer=issuer,
                              required_scopes=["mcp:use"])
    server = rondo.Server("bench-auth", "1.0.0", auth=auth, state=None)

    @server.tool
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    return server


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or sys.argv[1] != "http":
        raise SystemExit(__doc__)
    port = int(sys.argv[2])
    make(port, sys.argv[3] if len(sys.argv) == 4 else None).run_http(host="127.0.0.1", port=port)
