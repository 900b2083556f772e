"""The server the events fleet test runs on each worker (`rondo run ... --fleet --redis URL`).

Bearer tokens `user-NAME` verify as the user NAME (a test verifier). Webhooks may go to http
loopback here (the test's receiver); production keeps both refusals on.
"""

import os

import rondo
from rondo.events import Delivery, Events
from tests.helpers.user_tokens import user_auth

PID = os.getpid()

server = rondo.Server("fleet-events", state=None, auth=user_auth())
events = Events(delivery=Delivery(allow_http=True, allow_private=True, backoff=0.05),
                heartbeat=1.0)
server.extension(events)
events.event("job.done", description="A job finished",
             input_schema={"type": "object", "properties": {"queue": {"type": "string"}}})


@server.tool
async def finish(job: str, queue: str) -> str:
    """Finish a job: emits job.done from this worker."""
    await server.emit("job.done", {"job": job, "queue": queue, "pid": PID})
    return str(PID)
