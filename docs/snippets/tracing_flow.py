# file: docs/snippets/tracing_flow.py
import asyncio

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import rondo
from rondo import elicit
from rondo.client import Client

exporter = InMemorySpanExporter()  # in production: an OTLP exporter
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
# tracing=True uses the global provider (opentelemetry.trace.set_tracer_provider).
server = rondo.Server("traced", tracing=provider)
form = lambda field: elicit.form(f"{field}?", {  # noqa: E731
    "type": "object", "properties": {field: {"type": "string"}}, "required": [field]})


@server.tool
def profile(ctx: rondo.Context) -> str:
    color = ctx.ask("color", form("color"))  # round 1 ends here
    size = ctx.ask("size", form("size"))  # round 2 ends here
    return f"{color.content['color']}, {size.content['size']}"  # round 3


async def main() -> None:
    answer = lambda request: {"action": "accept", "content": {  # noqa: E731
        name: "x" for name in request.requested_schema["properties"]}}
    async with Client(server, on_elicit=answer, protocol="2026-07-28") as client:
        assert (await client.call_tool("profile")).text == "x, x"


asyncio.run(main())
first, second, third = exporter.get_finished_spans()
assert first.name == "tools/call profile" and first.attributes["gen_ai.tool.name"] == "profile"
flow = first.attributes["rondo.mcp.flow.id"]
for span, number in ((second, 2), (third, 3)):
    assert span.attributes["rondo.mcp.flow.id"] == flow
    assert span.attributes["rondo.mcp.flow.round"] == number
    assert span.links[0].context.span_id == first.context.span_id  # linked to round 1
print(f"flow {flow}: 3 rounds, 3 spans, rounds 2 and 3 linked to round 1")
