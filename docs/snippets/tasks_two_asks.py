# file: docs/snippets/tasks_two_asks.py
import asyncio

import rondo
from rondo import elicit
from rondo.client import ElicitRequest

server = rondo.Server("deploy")

TARGET = elicit.form("Deploy to which environment?", {
    "type": "object",
    "properties": {"env": {"type": "string", "enum": ["staging", "production"]}},
    "required": ["env"],
})
SWITCH = elicit.form("Warm. Switch traffic over?", {
    "type": "object", "properties": {"switch": {"type": "boolean"}}, "required": ["switch"],
})
runs = []


@server.tool(task="required")
async def deploy(service: str, ctx: rondo.Context) -> str:
    runs.append("top")  # the part before start_task() runs once per MRTR round
    env = (await ctx.ask("env", TARGET)).content["env"]  # 1. before: an input_required round
    await ctx.start_task(f"deploying {service} to {env}")
    runs.append("task")  # from here on: once, as the task
    await asyncio.sleep(0.1)
    switch = await ctx.ask("switch", SWITCH)  # 2. during: the task parks at input_required
    return f"{service} live on {env}" if switch.content["switch"] else f"{service} warm on {env}"


asked = []


def user(request: ElicitRequest) -> dict:
    asked.append(request.message)
    field = next(iter(request.requested_schema["properties"]))
    return {"action": "accept", "content": {field: {"env": "staging", "switch": True}[field]}}


async def main() -> None:
    # One handler answers both kinds of question: the MRTR round and the task's inputRequests.
    async with rondo.Client(server, on_elicit=user, tasks=True) as client:
        result = await client.call_tool("deploy", {"service": "api"})
    assert result.text == "api live on staging"
    assert asked == ["Deploy to which environment?", "Warm. Switch traffic over?"]
    assert runs == ["top", "top", "task"]  # round 1 asked; round 2 started the task


asyncio.run(main())
