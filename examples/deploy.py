"""A long-running tool as a task: it asks before the task exists, then again while it runs.

    python examples/deploy.py --stdio            # serve on stdio
    python examples/deploy.py --http 8000        # serve http://127.0.0.1:8000/mcp
    rondo call "python examples/deploy.py --stdio" deploy '{"service": "api"}'

`RONDO_TASKS_REDIS=redis://...` keeps the tasks in Redis, so a fleet of these (with shared
`RONDO_STATE_KEYS`) can serve any request of a task on any replica.
"""

from __future__ import annotations

import asyncio
import os
import sys

import rondo
from rondo import elicit
from rondo.tasks import MemoryTaskStore, Tasks

server = rondo.Server("deploy")
redis_url = os.environ.get("RONDO_TASKS_REDIS")
store = rondo.tasks.RedisTaskStore(redis_url) if redis_url else MemoryTaskStore()
server.extension(Tasks(store, poll_interval_ms=200))

ENVIRONMENT = elicit.form("Deploy to which environment?", {
    "type": "object",
    "properties": {"env": {"type": "string", "enum": ["staging", "production"]}},
    "required": ["env"],
})
SWITCH = elicit.form("New version is warm. Switch traffic over?", {
    "type": "object",
    "properties": {"switch": {"type": "boolean", "default": True}},
    "required": ["switch"],
})


@server.tool(task="optional")
async def deploy(service: str, ctx: rondo.Context) -> str:
    """Deploy a service: choose the environment, then confirm the switch-over halfway."""
    # Before the task: an ordinary MRTR round on tools/call (the handler runs again on the retry).
    env = await ctx.ask("env", ENVIRONMENT)
    if not env.accepted:
        return "Nothing deployed."
    target = env.content["env"]
    # From here on the call is answered with a task; this code runs once, as that task.
    await ctx.start_task(f"deploying {service} to {target}")
    for step, what in enumerate(("building", "pushing", "warming up"), start=1):
        await ctx.report_progress(step, 4, message=f"{what} {service}")
        await asyncio.sleep(0.3)
    # While it runs: the task parks at input_required until tasks/update brings the answer.
    switch = await ctx.ask("switch", SWITCH)
    if not (switch.accepted and switch.content["switch"]):
        return f"{service} is warm on {target}; traffic not switched."
    await ctx.report_progress(4, 4, message="switching traffic")
    await asyncio.sleep(0.3)
    return f"{service} is live on {target}."


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--stdio":
        server.run_stdio()
    elif len(sys.argv) > 2 and sys.argv[1] == "--http":
        server.run_http(port=int(sys.argv[2]))
    else:
        print(__doc__)
