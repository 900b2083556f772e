# file: docs/snippets/tracing_tasks.py
import asyncio

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import rondo
from rondo import elicit
from rondo.tasks import Tasks

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
server = rondo.Server("traced", tracing=provider)
server.extension(Tasks(poll_interval_ms=20))
form = lambda field: elicit.form(f"{field}?", {  # noqa: E731
    "type": "object", "properties": {field: {"type": "string"}}, "required": [field]})


@server.tool(task="required")
async def deploy(ctx: rondo.Context) -> str:
    """Deploy after asking where to, then ask before switching over."""
    env = (await ctx.ask("env", form("env"))).content["env"]  # round 1 of an MRTR flow
    await ctx.start_task(f"deploying to {env}")  # round 2 creates the task
    await asyncio.sleep(0.05)  # the client polls tasks/get meanwhile
    go = (await ctx.ask("go", form("go"))).content["go"]  # answered by tasks/update
    return f"{env}: {go}"


async def main() -> None:
    answer = lambda request: {"action": "accept", "content": {  # noqa: E731
        name: "ok" for name in request.requested_schema["properties"]}}
    async with rondo.Client(server, on_elicit=answer, tasks=True) as client:
        assert (await client.call_tool("deploy")).text == "ok: ok"


asyncio.run(main())
spans = exporter.get_finished_spans()
first, creation = (s for s in spans if s.name == "tools/call deploy")
task_id = creation.attributes["rondo.mcp.task.id"]
flow = creation.attributes["rondo.mcp.flow.id"]
assert first.attributes["rondo.mcp.flow.id"] == flow  # round 2 is still the flow of round 1
later = [s for s in spans if s.name in ("tasks/get", "tasks/update")]
assert len(later) >= 2
for span in later:  # every poll and answer: its own trace, linked to the creation span
    assert span.attributes["rondo.mcp.task.id"] == task_id
    (link,) = span.links
    assert link.context.span_id == creation.context.span_id
    assert dict(link.attributes) == {"rondo.mcp.task.id": task_id, "rondo.mcp.flow.id": flow}
print(f"task created in round 2 of flow {flow}: {len(later)} later spans linked to its creation")
