# file: docs/snippets/tasks_store.py
import rondo
from rondo.tasks import MemoryTaskStore, RedisTaskStore, Tasks

server = rondo.Server("jobs")
server.extension(Tasks(
    MemoryTaskStore(max_tasks=1_000),  # bounded: expired, then finished tasks make room
    ttl_ms=3_600_000,        # kept an hour from creation (never less)
    poll_interval_ms=1_000,  # what clients are told to poll at
    lease=30.0,              # a worker that stops renewing for 30 s loses its task: failed
    principal=lambda ctx: ctx.auth,  # bind each task to who made it (default: the StatePolicy's)
))

# For a fleet: every replica points at the same Redis and shares RONDO_STATE_KEYS.
fleet = rondo.Server("jobs")
fleet.extension(Tasks(RedisTaskStore("redis://127.0.0.1:6379/0")))  # connects on first use


@fleet.tool(task="required")
async def rebuild(ctx: rondo.Context) -> str:
    await ctx.start_task()
    return "rebuilt"


assert fleet.capabilities()["extensions"] == {"io.modelcontextprotocol/tasks": {}}
assert "extensions" not in server.capabilities()  # no task-opted tool: nothing advertised
