"""Benchmark fixture: `add` and the two-leg MRTR tool `ask_color`.

    python benchmarks/server.py http PORT    # http://127.0.0.1:PORT/mcp
    python benchmarks/server.py stdio
"""

from __future__ import annotations

import os
import sys

import rondo
from rondo import elicit

# RONDO_BENCH_TRACING=1 (benchmarks/server_tracing.py): spans through whatever tracer provider
# is configured; in the benchmark none is, so the OpenTelemetry API's no-op tracer.
server = rondo.Server("bench", "1.0.0", tracing=os.environ.get("RONDO_BENCH_TRACING") == "1")

COLOR = elicit.form(
    "Which color?",
    {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
)


@server.tool
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool
def ask_color(ctx: rondo.Context) -> str:
    """Ask the user for a color, then echo it."""
    answer = ctx.ask("color", COLOR)
    return answer.content["color"] if answer.accepted else "none"


def main(argv: list[str]) -> None:
    if len(argv) >= 1 and argv[0] == "stdio":
        server.run_stdio()
    elif len(argv) == 2 and argv[0] == "http":
        server.run_http(host="127.0.0.1", port=int(argv[1]))
    else:
        raise SystemExit("usage: server.py http PORT | server.py stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
