# file: docs/snippets/gateway_mount.py
import asyncio

import rondo
from rondo import elicit
from rondo.client import Client
from rondo.gateway import mount

app = rondo.Server("app")
weather = rondo.Server("weather")
CITY = elicit.form("Which city?", {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})


@weather.tool
def forecast(ctx: rondo.Context) -> str:
    """Asks which city: the round goes through the parent."""
    answer = ctx.ask("city", CITY)
    return f"sunny in {answer.content['city']}"


@weather.resource("weather://today", mime_type="text/plain")
def today() -> str:
    """Kept at its own URI."""
    return "sunny"


mount(app, weather, namespace="weather")


async def main() -> None:
    oslo = lambda request: {"action": "accept", "content": {"city": "Oslo"}}  # noqa: E731
    for protocol in ("2026-07-28", "2025-11-25"):
        async with Client(app, protocol=protocol, on_elicit=oslo) as client:
            assert [t.name for t in await client.list_tools()] == ["weather_forecast"]
            assert (await client.call_tool("weather_forecast")).text == "sunny in Oslo"
            assert (await client.read_resource("weather://today")).text == "sunny"

    @weather.tool
    def alerts() -> str:
        """Added after mounting: the parent lists it too."""
        return "none"

    async with Client(app) as client:
        assert "weather_alerts" in [t.name for t in await client.list_tools()]


asyncio.run(main())
