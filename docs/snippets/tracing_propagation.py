# file: docs/snippets/tracing_propagation.py
import asyncio

from opentelemetry import baggage, context
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import rondo
from rondo.client import Client

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
server = rondo.Server("traced", tracing=provider)
tenants: list[str] = []


@server.tool
def whoami() -> str:
    tenants.append(str(baggage.get_baggage("tenant")))  # the caller's baggage reaches the handler
    return "ok"


async def main() -> None:
    agent = provider.get_tracer("agent")
    # tracing=True: the client puts traceparent/tracestate/baggage into every request's _meta.
    async with Client(server, tracing=True, protocol="2026-07-28") as client:
        token = context.attach(baggage.set_baggage("tenant", "acme"))
        try:
            with agent.start_as_current_span("agent step"):
                await client.call_tool("whoami")
        finally:
            context.detach(token)


asyncio.run(main())
server_span = next(s for s in exporter.get_finished_spans() if s.name == "tools/call whoami")
step = next(s for s in exporter.get_finished_spans() if s.name == "agent step")
assert server_span.parent.span_id == step.context.span_id  # one trace, client to server
assert server_span.attributes["mcp.method.name"] == "tools/call"
assert tenants == ["acme"]
print("server span is a child of", step.name)
