# file: docs/snippets/legacy_explicit.py
import asyncio

import rondo
from rondo import InputRequired, elicit
from rondo.client import Client

server = rondo.Server("calendar")
asked: list[str] = []


@server.tool
async def connect_calendar(user: str, ctx: rondo.Context) -> object:
    """The same handler for every client: explicit rounds, a URL question, a state-only round."""
    link = f"https://calendar.example.com/connect?user={user}"
    consent = await ctx.ask("consent", elicit.url(f"Connect your calendar, {user}", link))
    if not consent.accepted:
        return "not connected"
    if ctx.state != "linked":
        await ctx.url_complete("consent")  # 2025-11-25: notifications/elicitation/complete
        return InputRequired(state="linked")  # one more round, carrying what we learnt
    return f"calendar connected for {user}"


def user(request) -> dict:
    asked.append(request.mode)
    return {"action": "accept"}


async def main() -> None:
    for protocol in ("2026-07-28", "2025-11-25"):
        async with Client(server, protocol=protocol, on_elicit=user,
                          elicit_modes=("form", "url")) as client:
            assert (await client.call_tool("connect_calendar", {"user": "ann"})).text == (
                "calendar connected for ann")
    # Asked once per client: on the legacy session the consent was carried into round 2.
    assert asked == ["url", "url"], asked


asyncio.run(main())
print("both eras: calendar connected")
