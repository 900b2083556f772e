"""The server every fleet test worker runs (`rondo run tests/helpers/fleet_app.py ...`).

Results name the process that produced them; `rondo run --worker-id` names the worker of every
response in a `Rondo-Worker` header. (Questions must not: an answer is bound to the exact
question asked, so a question that differed per worker would be asked again on each.)
FLEET_ONCE=1 makes every request state single-use.
"""

import os

import rondo
from rondo import elicit

PID = os.getpid()
TEXT = {"type": "object", "properties": {"v": {"type": "string"}}, "required": ["v"]}

server = rondo.Server(
    "fleet", state=rondo.StatePolicy.from_env(once=os.environ.get("FLEET_ONCE") == "1")
)


@server.tool
def interview(topic: str, ctx: rondo.Context) -> str:
    """Three rounds: two questions, then the answer."""
    name = ctx.ask("name", elicit.form("Your name?", TEXT))
    color = ctx.ask("color", elicit.form(f"{name.content['v']}'s color?", TEXT))
    return f"worker {PID}: {topic} {name.content['v']} {color.content['v']}"


@server.tool
def whoami() -> str:
    """The worker's pid."""
    return str(PID)


@server.tool
def touch_tools() -> str:
    """Say the tool list changed (on every worker's listen streams)."""
    server.notify_tools_changed()
    return str(PID)
