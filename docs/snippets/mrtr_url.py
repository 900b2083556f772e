# file: docs/snippets/mrtr_url.py
import asyncio

import rondo
from rondo import InputRequired, elicit
from rondo.client import Client, ElicitRequest

server = rondo.Server("bank")
LINKED: set[str] = set()  # stands in for your OAuth callback's store


@server.tool
async def balance(user: str, ctx: rondo.Context) -> object:
    """Credentials never go through a form: send the user to a page (URL mode)."""
    if user not in LINKED:
        consent = await ctx.ask("link", elicit.url("Connect your bank", "https://bank.example/link"))
        if not consent.accepted:
            return "Not connected."
        if user not in LINKED:  # accepted only means "I opened the page": ask again, don't fail
            return InputRequired(state="waiting-for-link")  # a state-only round
    return f"{user}: 42 EUR"


def browser(request: ElicitRequest) -> dict:
    print("open", request.url)  # the user opens the page and agrees
    return {"action": "accept"}


async def main() -> None:
    async with Client(server, on_elicit=browser, elicit_modes=("url",)) as client:
        # manual=True pauses at each input_required so we can watch the rounds.
        step = await client.call_tool("balance", {"user": "ada"}, manual=True)
        assert "link" in step.input_requests
        step = await client.resume(step, manual=True)  # accepted, but not linked yet
        assert not step.input_requests and step.request_state  # a state-only round
        LINKED.add("ada")  # meanwhile the bank's callback arrives
        done = await client.resume(step, manual=True)
        assert done.text == "ada: 42 EUR"


asyncio.run(main())
