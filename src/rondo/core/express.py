"""The express lane: a 2026-07-28 `tools/call` of a plain `def` tool, answered by one function.

Most calls are of the simplest kind: a synchronous tool, no middleware, no tracing, no task. The
general path (`Core.dispatch` → method table → `tools_call` → `Core.invoke` → the dialect) builds
a `Request`, a chain of coroutines and a `Context` for each, which costs more than the tool.
This lane does the same checks, in the same order, with the same answers, in one frame.

It decides whether it applies *before* running anything and returns None otherwise; the caller
then takes the general path, which gives whatever answer that path gives (errors included), so
the lane never has to reproduce a refusal it did not make itself. Once the tool has run, every
outcome (result, `ctx.ask`, `ToolError`, failure) is shaped here by the same helpers the general
path uses. `tests/core/test_express.py` holds the two paths to the same bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..mrtr.result import AskInterrupt, InputRequired
from ..server.context import Context
from ..server.request import Emit
from ..wire.errors import McpError
from ..wire.jsonrpc import error_response
from ..wire.logs import logger
from .failures import masked_internal_error
from .methods import tool_failure, tool_refusal, tools_call
from .results import tool_result

if TYPE_CHECKING:
    from ..server.components import Tool
    from ..wire.envelope import Envelope
    from .core import Core

log = logger("rondo.server")


def express_ready(core: Core) -> bool:
    """Can this core use the lane at all? Middleware and tracing must see every request, and
    a row that replaced `tools/call` owns every call: then never. (A wrap takes only its tools:
    `Core.takes`.)"""
    row = core.rows.get("tools/call")
    return (not core.middleware and core.tracer is None and row is not None
            and row.handler is tools_call)


def answer_tool(
    core: Core, rid: Any, params: dict[str, Any], env: Envelope, emit: Emit, auth: Any = None,
    peer: Any = None,
) -> dict[str, Any] | None:
    """The JSON-RPC response to a checked 2026-07-28 `tools/call` (shape and `_meta` envelope
    already verified), or None when the general path must answer it.

    The caller has checked `express_ready(core)` once; `rid` is a valid id. `Tool.express`
    says which tools qualify: a plain synchronous `def`, no task, no middleware of its own."""
    name = params.get("name")
    if type(name) is not str:
        return None
    tool = core.server.tools.get(name)
    if tool is None or not tool.express or (core.claims and core.takes(tool)):
        return None
    arguments = params.get("arguments")
    if arguments is not None and type(arguments) is not dict:
        return None
    sig = tool.signature
    ctx: Context | None = None
    retry = "inputResponses" in params or "requestState" in params
    if sig.context_param is not None or retry:
        ctx = Context.for_call(core.server, rid, "tools/call", params, env, core.modern,
                               auth=auth, emit=emit)
        if peer is not None:
            ctx.peer = peer
    try:
        if retry:
            assert ctx is not None
            core.open_retry(ctx, params)
        try:
            kwargs = sig.bind(arguments)
        except Exception as exc:
            from ..server.schema import ArgumentError  # only refusals pay for the import

            if not isinstance(exc, ArgumentError):
                raise
            return _respond(core, rid, tool_refusal(str(exc)))
        if ctx is not None:
            if sig.context_param is not None:
                kwargs[sig.context_param] = ctx
            ctx.runs_inline()
    except McpError as exc:
        return error_response(rid, exc)
    except Exception as exc:
        return _respond(core, rid, tool_failure(core, name, exc))
    done = run_bound(core, rid, tool, kwargs, ctx)
    if not isinstance(done, InputRequired):
        return done
    return ask_without_context(core, rid, tool, done, params, env, emit, auth, peer)


def run_bound(
    core: Core, rid: Any, tool: Tool, kwargs: dict[str, Any], ctx: Context | None,
) -> dict[str, Any] | InputRequired:
    """Run the tool on bound arguments and shape every outcome into its JSON-RPC response,
    except one: an `InputRequired` from a call with no context comes back as it is, for the
    caller to answer with `ask_without_context` (the typed lane has no envelope at hand)."""
    try:
        try:
            value = tool.fn(**kwargs)
        except AskInterrupt:
            value = InputRequired()
        if type(value) is str and tool.signature.output_schema is None:
            # The commonest answer: `tool_result`'s first case, without its call and the
            # try around it (a text block cannot fail to shape).
            return _respond(core, rid, {"content": [{"type": "text", "text": value}]})
        if isinstance(value, InputRequired):
            if ctx is None:  # an ask through some other request's context
                return value
            return _respond(core, rid, core.modern.input_required(ctx, value))
    except McpError as exc:
        return error_response(rid, exc)
    except Exception as exc:
        return _respond(core, rid, tool_failure(core, tool.name, exc))
    try:  # outside the tool's own failure handling, as on the general path
        return _respond(core, rid, tool_result(value, tool.signature))
    except McpError as exc:
        return error_response(rid, exc)
    except Exception:
        return error_response(rid, masked_internal_error(
            log, "unexpected failure answering a request"))


def ask_without_context(
    core: Core, rid: Any, tool: Tool, value: InputRequired, params: dict[str, Any],
    env: Envelope, emit: Emit, auth: Any, peer: Any = None,
) -> dict[str, Any]:
    """The response to an `InputRequired` a context-less call returned."""
    try:
        ctx = Context.for_call(core.server, rid, "tools/call", params, env, core.modern,
                               auth=auth, emit=emit)
        if peer is not None:
            ctx.peer = peer
        return _respond(core, rid, core.modern.input_required(ctx, value))
    except McpError as exc:
        return error_response(rid, exc)
    except Exception as exc:
        return _respond(core, rid, tool_failure(core, tool.name, exc))


def _respond(core: Core, rid: Any, result: dict[str, Any]) -> dict[str, Any]:
    if "resultType" not in result:
        result["resultType"] = "complete"
    meta = core.modern._result_meta
    if meta is not None and "_meta" not in result:
        result["_meta"] = meta
    return {"jsonrpc": "2.0", "id": rid, "result": result}
