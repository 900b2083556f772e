"""A read-only preference flow that works as a tool, a resource and a prompt.

It asks with `ctx.ask(...)`: on the 2026-07-28 wire a missing answer ends the round with
`input_required`, and the handler runs again from the top when the client retries with the
answer. Nothing is kept on the server between rounds: earlier answers travel, sealed, in the
request state. A 2025-11-25 client gets the same flows over its session: each question arrives as
a server-to-client request, and `connect_calendar`'s explicit state-only round runs again
in-process, so every item works for every client.

    python examples/preferences.py             # demo: serve over HTTP, walk the flows with rondo.Client
    python examples/preferences.py --stdio     # serve over stdio
    python examples/preferences.py --http 8000 # serve at http://127.0.0.1:8000/mcp
    python examples/preferences.py --check     # check every flow in-process, over stdio and HTTP
"""

from __future__ import annotations

import sys
from typing import Any
from urllib.parse import quote

import rondo
from rondo import InputRequired, elicit

server = rondo.Server("preferences", "1.0.0", instructions="Asks people about their preferences.")

SIZE = elicit.form(
    "Which size do you wear?",
    {
        "type": "object",
        "properties": {"size": {"type": "string", "enum": ["small", "medium", "large"]}},
        "required": ["size"],
    },
)


def color_question(user: str) -> dict[str, Any]:
    return elicit.form(
        f"Which color do you like, {user}?",
        {
            "type": "object",
            "properties": {"color": {"type": "string", "enum": ["red", "green", "blue"]}},
            "required": ["color"],
        },
    )


def likes(user: str, ctx: rondo.Context) -> str:
    answer = ctx.ask("color", color_question(user))
    if not answer.accepted:
        return f"{user} did not pick a color."
    return f"{user} likes {answer.content['color']}."


@server.tool
def favorite_color(user: str, ctx: rondo.Context) -> str:
    """Ask the user for their favorite color."""
    return likes(user, ctx)


@server.resource("prefs://{user}/color", name="color", mime_type="text/plain")
def color_resource(user: str, ctx: rondo.Context) -> str:
    """The user's favorite color, asked when read."""
    return likes(user, ctx)


@server.prompt
def color_poem(user: str, ctx: rondo.Context) -> str:
    """A poem prompt about the user's favorite color."""
    answer = ctx.ask("color", color_question(user))
    if not answer.accepted:
        return f"Write a short poem for {user}."
    return f"Write a short poem for {user} about the color {answer.content['color']}."


@server.tool
def profile(user: str, ctx: rondo.Context) -> str:
    """Ask two questions, one round after the other."""
    color = ctx.ask("color", color_question(user))
    size = ctx.ask("size", SIZE)
    chosen_color = color.content["color"] if color.accepted else "none"
    chosen_size = size.content["size"] if size.accepted else "none"
    return f"{user}: color {chosen_color}, size {chosen_size}."


@server.tool
async def connect_calendar(user: str, ctx: rondo.Context) -> Any:
    """Ask for consent on a web page, then take one state-only round before finishing."""
    link = f"https://calendar.example.com/connect?user={quote(user)}"
    consent = await ctx.ask("consent", elicit.url(f"Connect your calendar, {user}", link))
    if not consent.accepted:
        return f"{user} did not connect a calendar."
    if ctx.state != "consented":
        # Accepting a URL only means consent: come back once more, carrying the fact in the
        # sealed state, before claiming the connection is done.
        return InputRequired(state="consented")
    return f"Calendar connected for {user}."


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--stdio":
        server.run_stdio()
    elif len(sys.argv) > 2 and sys.argv[1] == "--http":
        server.run_http(port=int(sys.argv[2]))
    elif len(sys.argv) > 1 and sys.argv[1] == "--check":
        from preferences_check import main

        raise SystemExit(main(sys.argv[1:]))
    else:
        from preferences_demo import main as demo

        raise SystemExit(demo())
