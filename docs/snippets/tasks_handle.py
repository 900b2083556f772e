# file: docs/snippets/tasks_handle.py
import asyncio

import rondo
from rondo import elicit
from rondo.tasks import TaskHandle, TaskWasCancelled

server = rondo.Server("jobs")
OK = elicit.form("Really?", {"type": "object", "properties": {"ok": {"type": "boolean"}},
                             "required": ["ok"]})


@server.tool(task="optional")
async def purge(bucket: str, ctx: rondo.Context) -> str:
    await ctx.start_task()
    if not (await ctx.ask("ok", OK)).content["ok"]:
        return "kept"
    await asyncio.sleep(60)
    return f"purged {bucket}"


# Answering by hand: declare what you will answer (a task's questions are checked against
# the capabilities of the request that created it).
FORMS = {"elicitation": {"form": {}}}


async def main() -> None:
    async with rondo.Client(server, tasks=True, capabilities=FORMS) as client:
        handle = await client.start_tool("purge", {"bucket": "logs"})  # a handle, not the result
        assert isinstance(handle, TaskHandle)
        task_id = handle.task_id  # keep it somewhere durable to resume after a restart

    async with rondo.Client(server, tasks=True, capabilities=FORMS) as later:  # another process, say
        again = later.task(task_id)
        while (await again.get())["status"] != "input_required":
            await asyncio.sleep(0.05)
        assert list(again.last["inputRequests"]) == ["ok"]
        await again.update({"ok": {"action": "accept", "content": {"ok": True}}})
        await again.cancel()  # cooperative: the tool's coroutine is cancelled
        try:
            await again.wait()
        except TaskWasCancelled as gone:
            assert gone.task["status"] == "cancelled"


asyncio.run(main())
