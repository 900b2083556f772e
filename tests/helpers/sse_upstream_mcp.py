"""An old-style server nobody here wrote: the official Python SDK (`mcp`, pinned 2.3.0, run from
its own venv, never rondo's) serving the 2024-11-05 HTTP+SSE transport on the port given.
Prints "ready" once listening."""

from __future__ import annotations

import sys

import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("old-sse")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """Upper-case it."""
    return text.upper()


@server.prompt()
def greet(name: str) -> str:
    """Say hello."""
    return f"Hello {name}"


if __name__ == "__main__":
    port = int(sys.argv[1])
    config = uvicorn.Config(server.sse_app(), host="127.0.0.1", port=port, log_level="warning")
    print("ready", flush=True)
    uvicorn.Server(config).run()
