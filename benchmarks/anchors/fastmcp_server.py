"""Benchmark anchor on `fastmcp` 4.x: the same `add` and `ask_color` as benchmarks/server.py.
Runs in its own venv (benchmarks/.anchors/fastmcp), set up by run.py.

    python fastmcp_server.py http PORT   # HTTP on /mcp, JSON responses, stateless;
                                         # serves the 2026-07-28 wire per request
    python fastmcp_server.py stdio
"""

from __future__ import annotations

import sys

import mcp_types
from fastmcp import Context, FastMCP

server = FastMCP("bench-fastmcp")

COLOR_FORM = mcp_types.ElicitRequest(
    params=mcp_types.ElicitRequestFormParams(
        message="Which color?",
        requested_schema={
            "type": "object",
            "properties": {"color": {"type": "string"}},
            "required": ["color"],
        },
    )
)


@server.tool
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool
def ask_color(ctx: Context) -> str | mcp_types.InputRequiredResult:
    """Ask the user for a color, then echo it."""
    # FastMCP's guard pattern: return InputRequiredResult, read the answer on the retry.
    answers = ctx.input_responses or {}
    answer = answers.get("color")
    if answer is None:
        return mcp_types.InputRequiredResult(input_requests={"color": COLOR_FORM})
    content = getattr(answer, "content", None) or {}
    return str(content.get("color", "none"))


def main(argv: list[str]) -> None:
    if argv[:1] == ["stdio"]:
        server.run("stdio", show_banner=False)
    elif len(argv) == 2 and argv[0] == "http":
        server.run(
            "http",
            show_banner=False,
            host="127.0.0.1",
            port=int(argv[1]),
            log_level="warning",
            json_response=True,
            stateless_http=True,
        )
    else:
        raise SystemExit("usage: fastmcp_server.py http PORT | fastmcp_server.py stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
