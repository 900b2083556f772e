# file: docs/snippets/client_handlers.py
import asyncio

import rondo
from rondo import elicit
from rondo.client import Client, ElicitRequest, ElicitResult, Root, SampleRequest, SamplingResult

server = rondo.Server("handlers")


@server.tool
def plan(ctx: rondo.Context) -> str:
    answers = ctx.ask_all({
        "idea": rondo.sampling.create_message("One idea for a trip", 20),
        "dirs": rondo.roots.list(),
    })
    consent = ctx.ask("login", elicit.url("Sign in to the booking site", "https://booking.example/in"))
    return f"{answers['idea'].text} in {answers['dirs'][0].path} ({consent.action})"


async def sample(request: SampleRequest) -> SamplingResult:  # async handlers work too
    return SamplingResult(role="assistant", content={"type": "text", "text": "Lisbon"}, model="stub")


def consent(request: ElicitRequest) -> ElicitResult:
    print("open", request.url, "?")
    return ElicitResult("accept")


async def main() -> None:
    async with Client(
        server,
        on_elicit=consent,
        elicit_modes=("form", "url"),   # URL mode is declared only when you say so
        on_sample=sample,
        on_roots=[Root("file:///home/me/trips", "trips")],
    ) as client:
        print(client.handlers.capabilities())
        result = await client.call_tool("plan")
        print(result.text)
        assert result.text == "Lisbon in /home/me/trips (accept)"


asyncio.run(main())
