# file: docs/snippets/tasks_basic.py
import asyncio

import rondo

server = rondo.Server("reports")


@server.tool(task="optional")
async def report(topic: str, ctx: rondo.Context) -> str:
    """Write a long report (minutes, in real life)."""
    await ctx.start_task(f"researching {topic}")  # the call is answered with a task here
    for part in range(1, 4):
        await ctx.report_progress(part, 3, message=f"writing part {part} of 3")  # -> statusMessage
        await asyncio.sleep(0.1)
    return f"A report on {topic}, in three parts."


async def main() -> None:
    seen = []
    tasks = rondo.tasks.TasksClient(on_status=lambda task: seen.append(task["status"]))
    async with rondo.Client(server, tasks=tasks) as client:
        result = await client.call_tool("report", {"topic": "tides"})  # polls until it ends
        assert result.text == "A report on tides, in three parts."
    assert seen[0] == "working" and seen[-1] == "completed"
    # A client that did not declare the extension gets the same tool, run inline.
    async with rondo.Client(server) as plain:
        assert (await plain.call_tool("report", {"topic": "sand"})).text.startswith("A report")


asyncio.run(main())
