# file: docs/snippets/structured_output.py
import asyncio
from dataclasses import dataclass
from typing import Literal

import pydantic

import rondo
from rondo.client import Client

server = rondo.Server("weather", state=None)


@dataclass
class Forecast:
    city: str
    celsius: float
    sky: Literal["clear", "cloudy", "rain"]


class Station(pydantic.BaseModel):
    name: str
    height_m: int = pydantic.Field(ge=0, description="Metres above sea level")


@server.tool
def forecast(city: str) -> Forecast:
    """Tomorrow's weather."""
    return Forecast(city, 21.5, "clear")


@server.tool
def station(city: str) -> Station:
    """The weather station of a city."""
    return Station(name=f"{city} airport", height_m=12)


async def main() -> None:
    async with Client(server) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        schema = tools["forecast"].output_schema
        assert schema["properties"]["sky"]["enum"] == ["clear", "cloudy", "rain"]  # declared order
        assert tools["station"].output_schema["properties"]["height_m"]["minimum"] == 0

        result = await client.call_tool("forecast", {"city": "Oslo"})
        assert result.structured_content == {"city": "Oslo", "celsius": 21.5, "sky": "clear"}
        assert '"celsius": 21.5' in result.text or '"celsius":21.5' in result.text  # also as text

        got = await client.call_tool("station", {"city": "Oslo"})
        assert got.structured_content == {"name": "Oslo airport", "height_m": 12}


asyncio.run(main())
