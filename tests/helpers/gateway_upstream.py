"""An upstream rondo server on real loopback HTTP (uvicorn in a thread), recording what reached it."""

from __future__ import annotations

import asyncio
from typing import Any

import rondo
from rondo import InputRequired, elicit

if __package__:  # imported as tests.helpers.gateway_upstream (run as a script: stdio only)
    from .loopback import free_port, served, stop  # noqa: F401 (the gateway tests take them from here)

COLOR = elicit.form("Pick a color", {
    "type": "object",
    "properties": {"color": {"type": "string", "enum": ["red", "blue"]}},
    "required": ["color"],
})


# Request ids of the upstream's `wait` calls that were cancelled (the upstream saw it end).
CANCELLED: list[str] = []
STARTED: list[str] = []  # ... and of those that began


def upstream_server(**options: Any) -> rondo.Server:
    up = rondo.Server("upstream", page_size=2, **options)  # lists come in pages of two

    @up.completion
    def complete(ref: dict[str, Any], argument: dict[str, Any],
                 context: dict[str, str]) -> dict[str, Any]:
        """Names starting with what was typed (prompt `greet`, template `up://city/{name}`)."""
        where = ref.get("name") or ref.get("uri")
        names = [n for n in ("Ada", "Alan", "Grace") if n.startswith(argument.get("value", ""))]
        return {"values": [f"{where}:{n}" for n in names], "total": len(names),
                "hasMore": False}

    @up.tool
    async def chatty(ctx: rondo.Context) -> str:
        """Logs at three levels while it works."""
        await ctx.debug("fine detail")
        await ctx.log("info", {"step": 1}, logger="chatty")
        await ctx.warning("careful")
        await asyncio.sleep(0.05)  # each message leaves before the answer
        return "chatted"

    @up.tool
    async def wait(tag: str) -> str:
        """Waits until cancelled (recording the tag), or 20 s."""
        STARTED.append(tag)
        try:
            await asyncio.sleep(20)
        except asyncio.CancelledError:
            CANCELLED.append(tag)
            raise
        return "waited"

    @up.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @up.tool
    def color(ctx: rondo.Context) -> str:
        """One question, with ctx.ask."""
        answer = ctx.ask("color", COLOR)
        return f"color={answer.content['color']}"

    @up.tool
    def cleanup(folder: str, ctx: rondo.Context) -> object:
        """Explicit rounds: upstream state, then a question."""
        if ctx.state is None:
            return InputRequired(state={"step": 1})
        answer = elicit.response(ctx, "confirm", COLOR)
        if answer is elicit.MISSING:
            return InputRequired({"confirm": COLOR}, state={"step": 2})
        return f"step {ctx.state['step']}: {folder} {answer.content['color']}"

    @up.tool
    def echo(text: str) -> str:
        """Say it back."""
        return text

    @up.tool
    def fail() -> str:
        """A tool error."""
        raise rondo.ToolError("upstream says no")

    @up.tool
    async def hang() -> str:
        """Answers after five seconds: longer than the proxy waits in the tests."""
        await asyncio.sleep(5)
        return "late"

    @up.tool
    def picky(n: int) -> str:
        """An upstream JSON-RPC error with data the client must not see."""
        raise rondo.McpError(-32602, "n is out of range", {"internal": "http://10.0.0.7/db"})

    @up.tool
    def adaptive(ctx: rondo.Context) -> str:
        """Asks only a client that declared elicitation."""
        if "elicitation" not in ctx.client_capabilities:
            return "not asked"
        return f"asked: {ctx.ask('color', COLOR).content['color']}"

    @up.tool
    async def count(ctx: rondo.Context) -> str:
        """Reports three steps of progress."""
        for step in range(1, 4):
            await ctx.report_progress(step, 3, f"step {step}")
            await asyncio.sleep(0.05)  # each step leaves before the next (HTTP keeps the newest)
        return "counted"

    @up.tool
    def grow() -> str:
        """Adds a tool to this server: its clients hear tools list_changed."""

        @up.tool
        def extra() -> str:
            """Added while serving."""
            return "extra"

        return "grown"

    @up.prompt
    def greet(name: str) -> str:
        """Say hello."""
        return f"Hello {name}"

    @up.resource("up://today", mime_type="text/plain")
    def today() -> str:
        """Today."""
        return "sunny"

    @up.resource("up://city/{name}", mime_type="text/plain")
    def city(name: str) -> str:
        """A city."""
        return f"rain in {name}"

    return up


class Recorder:
    """ASGI wrapper: the headers of every POST that reached the app."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.posts: list[dict[str, str]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            self.posts.append({k.decode().lower(): v.decode() for k, v in scope["headers"]})
        await self.app(scope, receive, send)



if __name__ == "__main__":  # the same upstream over stdio
    upstream_server().run_stdio()
