"""The relay lane: a 2026-07-28 `tools/call` of a tool that answers from its raw arguments.

A proxy's tool (`gateway/proxy_components.py`) sends its arguments upstream as they came and returns the
upstream's answer: binding them to a signature, checking them against the upstream's schema
(the upstream checks its own) and shaping a return value would only cost. Such a tool sets
`Tool.relay`; when nothing else must see the call (no server middleware, no tracing, no wrap
of `tools/call` taking the tool, no middleware of its own, no task mode: `may_relay`), the
HTTP front calls `relay_call` instead of `Core.dispatch`. It does what the general path does
for such a tool, in the same order, with the same answers: the context, the retry envelope
opened before the tool runs, the tool, its `InputRequired` admitted and sealed, a failure
shaped as the tool's `isError` result. Unlike the express lane it may wait (the transport runs
it as a task, so progress streams and a client that leaves cancels it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..mrtr.admission import admit
from ..mrtr.ask import FLOW, USER
from ..mrtr.result import InputRequired
from ..server.context import Context
from ..wire.errors import McpError, invalid_params
from .methods import tool_failure
from .modern import input_required_result

if TYPE_CHECKING:
    from ..server.components import Tool
    from ..server.request import Emit
    from ..wire.envelope import Envelope
    from .core import Core


def may_relay(core: Core, tool: Tool) -> bool:
    """May this call of `tool` take the relay lane?"""
    return (tool.relay is not None and core.express and not tool.middleware
            and tool.task is None and not (core.claims and core.takes(tool)))


async def relay_call(
    core: Core, rid: Any, tool: Tool, params: dict[str, Any], env: Envelope, emit: Emit,
    auth: Any = None, peer: Any = None,
) -> dict[str, Any]:
    """The result object (with its `resultType`) of a checked 2026-07-28 `tools/call` of a
    relaying tool; raises McpError as `Core.dispatch` does."""
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    elif type(arguments) is not dict:
        raise invalid_params("arguments must be an object")
    modern = core.modern
    relay = tool.relay
    assert relay is not None
    try:
        ctx = Context.for_call(core.server, rid, "tools/call", params, env, modern, auth=auth,
                               emit=emit)
        if peer is not None:
            ctx.peer = peer
        if "inputResponses" in params or "requestState" in params:
            core.open_retry(ctx, params)
        value = await relay(ctx, arguments)
        result = relayed_round(core, ctx, value) if isinstance(value, InputRequired) else value
    except McpError:
        raise
    except Exception as exc:
        result = tool_failure(core, tool.name, exc)
    if "resultType" not in result:
        result["resultType"] = "complete"
    meta = modern._result_meta
    if meta is not None and "_meta" not in result:
        result["_meta"] = meta
    return result


def relayed_round(core: Core, ctx: Context, outcome: InputRequired) -> dict[str, Any]:
    """A relay's `InputRequired` as the dialect's `input_required` makes it (sealed first,
    then admitted against what the client declared), except that the sealed state carries no
    digests of the questions: they are the upstream's, answered through the upstream's own
    state, and a relay never reads an answer through `ctx.ask` (the digests are for that)."""
    policy = ctx.server.state_policy
    if policy is None:
        return core.modern.input_required(ctx, outcome)
    requests = dict(outcome.input_requests)
    token = None
    if outcome.state is not None:
        env: dict[str, Any] = {USER: outcome.state}
        if ctx._flow is not None:
            env[FLOW] = ctx._flow
        token = policy.seal_for(ctx, env)
    admit(ctx, requests, token is not None)
    return input_required_result(requests, token)
