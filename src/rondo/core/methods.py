"""The built-in method table: the handlers of every JSON-RPC method MCP defines, as
`Method` rows (the row type is `rondo.server.method`). Extensions and `Server.method` add
rows; dispatch never changes.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..mrtr.result import InputRequired
from ..server.content import ToolError, text
from ..server.method import Handler, Method
from ..wire.era import LEGACY, MODERN
from ..wire.errors import (
    McpError,
    internal_error,
    invalid_params,
    method_not_found,
    resource_not_found,
)
from ..wire.logs import logger
from ..wire.meta import LOG_LEVEL_RANK, MODERN_VERSIONS, SUBSCRIPTION_ID
from .results import prompt_messages, resource_contents, tool_result

if TYPE_CHECKING:
    from ..server.request import Request
    from .core import Core

log = logger("rondo.server")

# -- discovery and listing -------------------------------------------------------------------


async def discover(core: Core, req: Request) -> dict[str, Any]:
    server = core.server
    result: dict[str, Any] = {
        "supportedVersions": list(MODERN_VERSIONS),
        "capabilities": server.capabilities(),
        "ttlMs": server.discover_ttl_ms,
        "cacheScope": "public",
    }
    if server.instructions is not None:
        result["instructions"] = server.instructions
    return result


def page(core: Core, items: list[Any], params: Mapping[str, Any], key: str,
         auth: Any = None) -> dict[str, Any]:
    private = False
    if auth is not None and core.server.auth is not None:
        # rondo.auth hook: list only what the caller's token may use (a per-caller list).
        from ..auth.scopes import visible

        shown = visible(core.server, auth, key, items)
        if shown is not None:
            items, private = shown, True
    cursor = params.get("cursor")
    start = 0 if cursor is None else _decode_cursor(cursor, len(items))
    server = core.server
    end = start + server.page_size
    result: dict[str, Any] = {key: [item.wire for item in items[start:end]]}
    if end < len(items):
        result["nextCursor"] = _encode_cursor(end)
    result["ttlMs"] = server.list_ttl_ms
    result["cacheScope"] = "private" if private else server.list_cache_scope
    return result


def _lister(registry: str, key: str) -> Handler:
    async def list_items(core: Core, req: Request) -> dict[str, Any]:
        return page(core, list(getattr(core.server, registry).values()), req.params, key, req.auth)

    list_items.__name__ = f"list_{registry}"
    return list_items


# -- the three methods that may ask for input ------------------------------------------------


def _arguments(params: Mapping[str, Any]) -> Any:
    arguments = params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise invalid_params("arguments must be an object")
    return arguments


async def tools_call(core: Core, req: Request) -> dict[str, Any]:
    params = req.params
    name = params.get("name")
    if not isinstance(name, str):
        raise invalid_params("tools/call needs a tool name")
    tool = core.server.tools.get(name)
    if tool is None:
        raise invalid_params(f"Unknown tool: {name}")
    arguments = _arguments(params)
    try:
        done, value = await core.invoke(req, tool, arguments, tool_refusal)
    except McpError:
        raise
    except Exception as exc:
        return tool_failure(core, name, exc)
    return value if done else tool_result(value, tool.signature)


def tool_failure(core: Core, name: str, exc: Exception) -> dict[str, Any]:
    """The `isError` result for a tool that raised (the express lane shares it). Called from
    inside the `except` clause: the log line carries the traceback."""
    if isinstance(exc, ToolError):  # meant for the model: the message passes through
        return {"content": [text(str(exc))], "isError": True}
    # rondo's own advice, or a legacy ctx.ask that failed (`public`): also for the model.
    if getattr(exc, "public", False) is True:
        return {"content": [text(str(exc))], "isError": True}
    if not core.server.mask_errors:  # development opt-in: the exception's text is shown
        log.exception("tool %r failed", name)
        return {"content": [text(f"Tool {name!r} failed: {exc}")], "isError": True}
    from .failures import log_failure

    ref = log_failure(log, f"tool {name!r} failed")
    return {"content": [text(f"Internal error in tool {name!r} (reference {ref})")],
            "isError": True}


def tool_refusal(reason: str) -> dict[str, Any]:
    """The answer to arguments that do not fit the tool's schema (the express lane shares it)."""
    # Arguments that do not fit the schema are a tool error the model can correct, not -32602.
    return {"content": [{"type": "text", "text": reason}], "isError": True}


async def prompts_get(core: Core, req: Request) -> dict[str, Any]:
    params = req.params
    name = params.get("name")
    if not isinstance(name, str):
        raise invalid_params("prompts/get needs a prompt name")
    prompt = core.server.prompts.get(name)
    if prompt is None:
        raise invalid_params(f"Unknown prompt: {name}")
    arguments = _arguments(params)
    for required in prompt.required:
        if not arguments or required not in arguments:
            raise invalid_params(f"Missing required argument '{required}' for prompt {name}")

    def refuse(reason: str) -> Any:
        raise invalid_params(reason)

    done, value = await core.invoke(req, prompt, arguments, refuse)
    if done:
        answered: dict[str, Any] = value
        return answered
    result: dict[str, Any] = {"messages": prompt_messages(value)}
    description = prompt.wire.get("description")
    if description is not None:
        result["description"] = description
    return result


async def resources_read(core: Core, req: Request) -> dict[str, Any]:
    uri = req.params.get("uri")
    if not isinstance(uri, str):
        raise invalid_params("resources/read needs a uri")
    component, variables = core.find_resource(uri)

    def refuse(reason: str) -> Any:
        raise resource_not_found(uri)

    done, value = await core.invoke(req, component, variables, refuse)
    if done:
        answered: dict[str, Any] = value
        return answered
    contents = resource_contents(value, uri, component.mime_type)
    if not contents:
        raise resource_not_found(uri)
    server = core.server
    return {
        "contents": contents,
        "ttlMs": component.ttl_ms if component.ttl_ms is not None else server.read_ttl_ms,
        "cacheScope": component.cache_scope or server.read_cache_scope,
    }


def _tool_waits(core: Core, params: Mapping[str, Any]) -> bool:
    name = params.get("name")
    # A name that is no string (a list cannot even be looked up) is refused without waiting.
    tool = core.server.tools.get(name) if isinstance(name, str) else None
    return tool is not None and _waits(tool.signature)


def _prompt_waits(core: Core, params: Mapping[str, Any]) -> bool:
    name = params.get("name")
    prompt = core.server.prompts.get(name) if isinstance(name, str) else None
    return prompt is not None and _waits(prompt.signature)


def _resource_waits(core: Core, params: Mapping[str, Any]) -> bool:
    uri = params.get("uri")
    if not isinstance(uri, str):
        return False
    try:
        component, _ = core.find_resource(uri)
    except McpError:
        return False
    return _waits(component.signature)


def _waits(sig: Any) -> bool:
    return bool(sig.is_async or sig.threaded)


# -- completion and subscriptions ----------------------------------------------------------


async def complete(core: Core, req: Request) -> dict[str, Any]:
    from ..server.server import COMPLETION_LIMIT

    params = req.params
    ref = params.get("ref")
    argument = params.get("argument")
    if not isinstance(ref, dict) or ref.get("type") not in ("ref/prompt", "ref/resource"):
        raise invalid_params("completion/complete needs ref of type ref/prompt or ref/resource")
    if not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
        raise invalid_params("completion/complete needs argument {name, value}")
    if ref["type"] == "ref/prompt" and (
        not isinstance(ref.get("name"), str) or ref["name"] not in core.server.prompts
    ):
        raise invalid_params(f"Unknown prompt: {ref.get('name')}")
    context = params.get("context")
    context_args = context.get("arguments", {}) if isinstance(context, dict) else {}
    hook = core.server.completion_handler
    assert hook is not None  # gated by the completions capability
    value = hook(ref, argument, context_args)
    if inspect.iscoroutine(value):
        value = await value
    if isinstance(value, InputRequired):
        raise internal_error(
            "completion/complete cannot answer input_required "
            "(only tools/call, prompts/get and resources/read can)"
        )
    if isinstance(value, dict):
        values = list(value.get("values", []))
        completion: dict[str, Any] = {"values": values[:COMPLETION_LIMIT]}
        for key in ("total", "hasMore"):
            if key in value:
                completion[key] = value[key]
    else:
        values = [str(v) for v in (value or [])]
        completion = {"values": values[:COMPLETION_LIMIT], "total": len(values),
                      "hasMore": len(values) > COMPLETION_LIMIT}
    return {"completion": completion}


def _completion_waits(core: Core, params: Mapping[str, Any]) -> bool:
    return inspect.iscoroutinefunction(core.server.completion_handler)


async def listen(core: Core, req: Request) -> dict[str, Any]:
    from .subscriptions import Listener, principal_key

    wanted = req.params.get("notifications")
    if not isinstance(wanted, dict):
        raise invalid_params("subscriptions/listen needs a notifications filter object")
    server = core.server
    honoured: dict[str, Any] = {}
    flags: set[str] = set()
    for flag, cap in (
        ("toolsListChanged", "tools"),
        ("promptsListChanged", "prompts"),
        ("resourcesListChanged", "resources"),
    ):
        # Every list this server advertises has listChanged: the gate is whether it serves it.
        if wanted.get(flag) is True and server.serves(cap):
            honoured[flag] = True
            flags.add(flag)
    uris: tuple[str, ...] = ()
    subs = wanted.get("resourceSubscriptions")
    if subs is not None:
        if not isinstance(subs, list) or not all(isinstance(u, str) for u in subs):
            raise invalid_params("resourceSubscriptions must be an array of URIs")
        if server.serves("resources"):
            uris = tuple(subs)
            honoured["resourceSubscriptions"] = list(subs)
    rid = req.id
    listener = Listener(rid, frozenset(flags), uris, req.emit, principal_key(req.auth))
    core.subscriptions.add(listener)  # refused (-32000) beyond the caps, before acknowledging
    try:
        req.emit(
            {
                "jsonrpc": "2.0",
                "method": "notifications/subscriptions/acknowledged",
                "params": {"_meta": {SUBSCRIPTION_ID: rid}, "notifications": honoured},
            }
        )
        import asyncio  # only streams need the event loop; see transport/stdio.py

        await asyncio.Event().wait()  # until the client goes away (the transport cancels us)
    finally:
        core.subscriptions.remove(listener)
    return {"_meta": {SUBSCRIPTION_ID: rid}}  # pragma: no cover - only reached if woken


def _always(core: Core, params: Mapping[str, Any]) -> bool:
    return True


# -- 2025-11-25 only ---------------------------------------------------------------------------


async def ping(core: Core, req: Request) -> dict[str, Any]:
    return {}


async def set_level(core: Core, req: Request) -> dict[str, Any]:
    level = req.params.get("level")
    if level not in LOG_LEVEL_RANK:
        raise invalid_params(f"Unknown log level {level!r}")
    req.call.session.log_level = level
    return {}


async def subscribe(core: Core, req: Request) -> dict[str, Any]:
    if not core.server.serves("resources"):  # resources always advertise subscribe
        raise method_not_found(req.method)
    uri = req.params.get("uri")
    if not isinstance(uri, str) or not uri:
        raise invalid_params(f"{req.method} needs a uri")
    session = req.call.session
    if req.method == "resources/subscribe":
        if session.subscriptions is None:
            session.subscriptions = set()
        session.subscriptions.add(uri)
    elif session.subscriptions is not None:
        session.subscriptions.discard(uri)
    return {}


_MODERN = frozenset({MODERN})
_LEGACY = frozenset({LEGACY})

BUILTIN: tuple[Method, ...] = (
    Method("server/discover", discover, _MODERN),
    Method("tools/list", _lister("tools", "tools"), gate="tools"),
    Method("tools/call", tools_call, gate="tools", suspends=_tool_waits, name_field="name",
           may_ask=True),
    Method("resources/list", _lister("resources", "resources"), gate="resources"),
    Method("resources/templates/list", _lister("templates", "resourceTemplates"), gate="resources"),
    Method("resources/read", resources_read, gate="resources", suspends=_resource_waits,
           name_field="uri", may_ask=True),
    Method("prompts/list", _lister("prompts", "prompts"), gate="prompts"),
    Method("prompts/get", prompts_get, gate="prompts", suspends=_prompt_waits, name_field="name",
           may_ask=True),
    Method("completion/complete", complete, gate="completions", suspends=_completion_waits),
    Method("subscriptions/listen", listen, _MODERN, suspends=_always),
    Method("ping", ping, _LEGACY),
    Method("logging/setLevel", set_level, _LEGACY),
    Method("resources/subscribe", subscribe, _LEGACY, gate="resources"),
    Method("resources/unsubscribe", subscribe, _LEGACY, gate="resources"),
)


def _encode_cursor(offset: int) -> str:
    import base64  # only lists longer than a page have cursors

    return base64.urlsafe_b64encode(f"o{offset}".encode()).decode().rstrip("=")


def _decode_cursor(cursor: Any, total: int) -> int:
    if not isinstance(cursor, str):
        raise invalid_params("Invalid cursor")
    import base64

    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        if not raw.startswith("o"):
            raise ValueError
        offset = int(raw[1:])
    except (ValueError, UnicodeDecodeError):
        raise invalid_params("Invalid cursor") from None
    if offset < 0 or offset > total:
        raise invalid_params("Invalid cursor")
    return offset
