"""An old-style server nobody here wrote whose tools ask mid-call: the official Python SDK
(`mcp`, pinned 2.3.0, run from its own venv, never rondo's) serving the 2024-11-05 HTTP+SSE
transport on the port given, for the legacy bridge over SSE (tests/gateway/test_bridge_sse.py).
`book` elicits twice (a day, then a time) and `summarize` samples the client's model; each
question goes out on the one SSE stream of the session, as a request of its own. Prints "ready"
once listening; each tool body start is printed as `ran NAME` on stdout. With `stdio` instead
of a port it serves stdio (the bridge's stdio pool, tests/gateway/test_bridge_stdio.py), and
`ran NAME` goes to stderr."""

from __future__ import annotations

import sys

import uvicorn
from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

server = MCPServer("old-sse-asking")
STDIO = sys.argv[1:] == ["stdio"]


def ran(name: str) -> None:
    print(f"ran {name}", file=sys.stderr if STDIO else sys.stdout, flush=True)


class Day(BaseModel):
    day: str


class Time(BaseModel):
    time: str


@server.tool()
async def book(room: str, ctx: Context) -> str:
    """Asks which day, then what time."""
    ran("book")
    day = await ctx.elicit("Which day?", Day)
    if day.action != "accept" or day.data is None:
        return f"{room}: not booked ({day.action})"
    time = await ctx.elicit("What time?", Time)
    if time.action != "accept" or time.data is None:
        return f"{room}: not booked ({time.action})"
    return f"{room} booked for {day.data.day} at {time.data.time}"


@server.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Asks the client's model."""
    ran("summarize")
    answer = await ctx.request_context.session.create_message(
        [types.SamplingMessage(role="user",
                               content=types.TextContent(type="text", text=f"Summarize: {text}"))],
        max_tokens=50, related_request_id=ctx.request_id)
    content = answer.content
    return "summary: " + (content.text if isinstance(content, types.TextContent) else "?")


if __name__ == "__main__" and STDIO:
    server.run("stdio")
elif __name__ == "__main__":
    port = int(sys.argv[1])
    config = uvicorn.Config(server.sse_app(), host="127.0.0.1", port=port, log_level="warning")
    print("ready", flush=True)
    uvicorn.Server(config).run()
