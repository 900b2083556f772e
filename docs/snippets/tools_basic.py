# file: docs/snippets/tools_basic.py
import asyncio
from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec

import rondo
from rondo import ToolError
from rondo.client import Client

server = rondo.Server("weather")


@dataclass
class Forecast:
    city: str
    celsius: float
    sky: Literal["clear", "cloudy", "rain"]


@server.tool(annotations={"readOnlyHint": True})
def forecast(
    city: Annotated[str, msgspec.Meta(min_length=1, description="City name")],
    days: Annotated[int, msgspec.Meta(ge=1, le=7)] = 1,
) -> Forecast:
    """Tomorrow's weather for a city."""
    if city == "Atlantis":
        raise ToolError("no weather station in Atlantis")  # the model sees this, isError: true
    return Forecast(city, 21.5, "clear")


@server.tool
async def slow_sum(numbers: list[float], ctx: rondo.Context) -> float:
    """Add numbers, reporting progress (sent only if the client asked for it)."""
    total = 0.0
    for i, n in enumerate(numbers, 1):
        total += n
        await ctx.report_progress(i, len(numbers))
    return total


async def main() -> None:
    async with Client(server) as client:
        (tool, _) = await client.list_tools()
        print(tool.input_schema)  # built from the type hints
        print(tool.output_schema)  # built from the return type

        ok = await client.call_tool("forecast", {"city": "Oslo"})
        assert ok.structured_content == {"city": "Oslo", "celsius": 21.5, "sky": "clear"}

        bad = await client.call_tool("forecast", {"city": "Oslo", "days": 9})
        assert bad.is_error  # invalid arguments: a readable message for the model
        print(bad.text)

        missing = await client.call_tool("forecast", {"city": "Atlantis"})
        assert missing.is_error and missing.text == "no weather station in Atlantis"

        assert (await client.call_tool("slow_sum", {"numbers": [1, 2.5]})).text == "3.5"


asyncio.run(main())
