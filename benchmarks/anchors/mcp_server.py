"""Benchmark anchor on the official `mcp` SDK (2.x, `MCPServer`): the same `add` and `ask_color`
as benchmarks/server.py. Runs in its own venv (benchmarks/.anchors/mcp), set up by run.py.

    python mcp_server.py http PORT   # streamable HTTP on /mcp, JSON responses, stateless;
                                     # serves the 2026-07-28 wire per request (no handshake)
    python mcp_server.py stdio
"""

from __future__ import annotations

import sys
from typing import Annotated

from mcp.server.mcpserver import Elicit, MCPServer, Resolve
from pydantic import BaseModel

server = MCPServer("bench-mcp", version="1.0.0", log_level="WARNING")


@server.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


class Color(BaseModel):
    color: str


def which_color() -> Elicit[Color]:
    # The SDK's resolver asks with an InputRequiredResult on 2026-07-28 (MRTR).
    return Elicit("Which color?", Color)


@server.tool()
def ask_color(answer: Annotated[Color, Resolve(which_color)]) -> str:
    """Ask the user for a color, then echo it."""
    return answer.color


def main(argv: list[str]) -> None:
    if argv[:1] == ["stdio"]:
        server.run("stdio")
    elif len(argv) == 2 and argv[0] == "http":
        server.run(
            "streamable-http",
            host="127.0.0.1",
            port=int(argv[1]),
            json_response=True,
            stateless_http=True,
        )
    else:
        raise SystemExit("usage: mcp_server.py http PORT | mcp_server.py stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
