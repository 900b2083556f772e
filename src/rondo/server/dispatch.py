"""The transport-free core: one JSON-RPC message in, one response (plus notifications) out.

Transports call `Core.handle` (stdio, memory) or the finer steps (`envelope`, `check_version`,
`dispatch`) when they must interleave their own checks, as Streamable HTTP does with headers.
"""

from __future__ import annotations

import base64
import inspect
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..mrtr.ask import envelope_for, load_envelope
from ..mrtr.result import AskInterrupt, InputRequired
from ..wire.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    McpError,
    internal_error,
    invalid_params,
    method_not_found,
    resource_not_found,
)
from ..wire.meta import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LOG_LEVEL,
    LOG_LEVEL_RANK,
    MODERN_VERSIONS,
    PROTOCOL_VERSION,
    SERVER_INFO,
    SUBSCRIPTION_ID,
)
from .context import Context
from .subscriptions import Listener, Subscriptions

if TYPE_CHECKING:
    from .server import Server

log = logging.getLogger("rondo.server")

Emit = Callable[[dict[str, Any]], None]

_INPUT_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})


def _noop(_: dict[str, Any]) -> None:
    return None


class Envelope:
    """The per-request `_meta` fields every 2026-07-28 request carries."""

    __slots__ = ("meta", "version", "capabilities", "client_info", "log_level")

    def __init__(self, meta: dict[str, Any]) -> None:
        self.meta = meta
        self.version: str = meta[PROTOCOL_VERSION]
        self.capabilities: dict[str, Any] = meta[CLIENT_CAPABILITIES]
        self.client_info = meta.get(CLIENT_INFO)
        self.log_level = meta.get(LOG_LEVEL)


def error_response(rid: Any, exc: McpError) -> dict[str, Any]:
    # An unreadable id is omitted: `id: null` is not a RequestId in the MCP schemas.
    if rid is None:
        return {"jsonrpc": "2.0", "error": exc.to_error()}
    return {"jsonrpc": "2.0", "id": rid, "error": exc.to_error()}


def request_shape(msg: Any) -> tuple[Any, str, dict[str, Any], bool]:
    """Check the JSON-RPC request/notification shape: returns (id, method, params, is_request)."""
    if not isinstance(msg, dict):
        raise McpError(INVALID_REQUEST, "Invalid Request: expected a JSON object")
    rid = msg.get("id")
    is_request = "id" in msg
    if is_request and (rid is None or isinstance(rid, bool) or not isinstance(rid, str | int)):
        raise McpError(INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
    if msg.get("jsonrpc") != "2.0":
        raise McpError(INVALID_REQUEST, "Invalid Request: jsonrpc must be \"2.0\"")
    method = msg.get("method")
    if not isinstance(method, str):
        if "result" in msg or "error" in msg:
            raise McpError(INVALID_REQUEST, "Invalid Request: this endpoint takes no responses")
        raise McpError(INVALID_REQUEST, "Invalid Request: method must be a string")
    params = msg.get("params", {})
    if not isinstance(params, dict):
        raise McpError(INVALID_REQUEST, "Invalid Request: params must be an object")
    return rid, method, params, is_request


def envelope(params: Mapping[str, Any]) -> Envelope:
    """Check the required `_meta` fields (-32602 when missing or mistyped)."""
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        raise invalid_params("Missing required _meta (protocol version and client capabilities)")
    version = meta.get(PROTOCOL_VERSION)
    if not isinstance(version, str):
        raise invalid_params(f"Missing required _meta field {PROTOCOL_VERSION}")
    caps = meta.get(CLIENT_CAPABILITIES)
    if not isinstance(caps, dict):
        raise invalid_params(f"Missing required _meta field {CLIENT_CAPABILITIES}")
    info = meta.get(CLIENT_INFO)
    if info is not None and not isinstance(info, dict):
        raise invalid_params(f"{CLIENT_INFO} must be an object")
    level = meta.get(LOG_LEVEL)
    if level is not None and (not isinstance(level, str) or level not in LOG_LEVEL_RANK):
        raise invalid_params(f"Unknown log level {level!r}")
    return Envelope(meta)


def check_version(env: Envelope, supported: tuple[str, ...] = MODERN_VERSIONS) -> None:
    if env.version not in supported:
        raise McpError(
            -32022,
            "Unsupported protocol version",
            {"supported": list(supported), "requested": env.version},
        )


class Core:
    """Answers 2026-07-28 requests for one `Server`. Holds no per-client state."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.subscriptions = Subscriptions()
        self._methods: dict[str, Callable[..., Any]] = {
            "server/discover": self._discover,
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
            "resources/list": self._resources_list,
            "resources/templates/list": self._templates_list,
            "resources/read": self._resources_read,
            "prompts/list": self._prompts_list,
            "prompts/get": self._prompts_get,
            "completion/complete": self._complete,
            "subscriptions/listen": self._listen,
        }
        # Which server capability gates a method: not advertised -> -32601.
        self._gates = {
            "tools/list": "tools",
            "tools/call": "tools",
            "resources/list": "resources",
            "resources/templates/list": "resources",
            "resources/read": "resources",
            "prompts/list": "prompts",
            "prompts/get": "prompts",
            "completion/complete": "completions",
        }
        self._result_meta = {SERVER_INFO: server.info} if server.server_info_in_results else None

    # -- entry points ----------------------------------------------------------------------------

    async def handle(
        self, msg: Any, *, emit: Emit = _noop, auth: Any = None
    ) -> dict[str, Any] | None:
        """Answer one decoded message; None for notifications. Never raises for bad input."""
        rid = msg.get("id") if isinstance(msg, dict) else None
        try:
            rid, method, params, is_request = request_shape(msg)
            if not is_request:
                return None  # the transport handles notifications/cancelled itself
            env = envelope(params)
            check_version(env)
            result = await self.dispatch(rid, method, params, env, emit=emit, auth=auth)
            return {"jsonrpc": "2.0", "id": rid, "result": result}
        except McpError as exc:
            return error_response(rid if _valid_id(rid) else None, exc)
        except Exception:
            log.exception("unexpected failure answering a request")
            return error_response(rid if _valid_id(rid) else None, internal_error())

    async def dispatch(
        self,
        rid: Any,
        method: str,
        params: dict[str, Any],
        env: Envelope,
        *,
        emit: Emit = _noop,
        auth: Any = None,
    ) -> dict[str, Any]:
        """Run the method and return its result object (resultType included). Raises McpError."""
        handler = self._methods.get(method)
        if handler is None:
            raise method_not_found(method)
        gate = self._gates.get(method)
        if gate is not None and gate not in self.server.capabilities():
            raise method_not_found(method)
        try:
            result: dict[str, Any] = await handler(rid, method, params, env, emit, auth)
        except AskInterrupt:
            # `run` turns ctx.ask into input_required for the three methods that may ask; one
            # reaching here came from anywhere else (a hook holding on to a Context, say).
            raise internal_error(
                f"{method} cannot ask for input (only tools/call, prompts/get and "
                "resources/read can)"
            ) from None
        if "resultType" not in result:
            result["resultType"] = "complete"
        if self._result_meta is not None and "_meta" not in result:
            result["_meta"] = self._result_meta
        return result

    def may_suspend(self, method: str, params: Mapping[str, Any]) -> bool:
        """Could answering this request wait on something (an async handler, a stream)?

        When it cannot, a transport may await `dispatch` inline instead of running it as a
        concurrent task: whatever it emits is already known when the result is.
        """
        server = self.server
        if method == "tools/call":
            tool = server.tools.get(params.get("name"))  # type: ignore[arg-type]
            return tool is not None and _waits(tool.signature)
        if method == "prompts/get":
            prompt = server.prompts.get(params.get("name"))  # type: ignore[arg-type]
            return prompt is not None and _waits(prompt.signature)
        if method == "resources/read":
            uri = params.get("uri")
            if not isinstance(uri, str):
                return False
            try:
                component, _ = self.find_resource(uri)
            except McpError:
                return False
            return _waits(component.signature)
        if method == "completion/complete":
            return inspect.iscoroutinefunction(server.completion_handler)
        return method == "subscriptions/listen"

    # -- discovery and listing -----------------------------------------------------------------

    async def _discover(
        self, rid: Any, method: str, params: dict[str, Any], env: Envelope, emit: Emit, auth: Any
    ) -> dict[str, Any]:
        server = self.server
        result: dict[str, Any] = {
            "supportedVersions": list(MODERN_VERSIONS),
            "capabilities": server.capabilities(),
            "ttlMs": server.discover_ttl_ms,
            "cacheScope": "public",
        }
        if server.instructions is not None:
            result["instructions"] = server.instructions
        return result

    def _page(self, items: list[Any], params: Mapping[str, Any], key: str,
              auth: Any = None) -> dict[str, Any]:
        private = False
        if auth is not None and self.server.auth is not None:
            # rondo.auth hook: list only what the caller's token may use (a per-caller list).
            from ..auth.scopes import visible

            shown = visible(self.server, auth, key, items)
            if shown is not None:
                items, private = shown, True
        cursor = params.get("cursor")
        start = 0
        if cursor is not None:
            start = _decode_cursor(cursor, len(items))
        size = self.server.page_size
        end = start + size
        result: dict[str, Any] = {key: [item.wire for item in items[start:end]]}
        if end < len(items):
            result["nextCursor"] = _encode_cursor(end)
        result["ttlMs"] = self.server.list_ttl_ms
        result["cacheScope"] = "private" if private else self.server.list_cache_scope
        return result

    async def _tools_list(
        self, rid: Any, method: str, params: dict[str, Any], env: Envelope, emit: Emit, auth: Any
    ) -> dict[str, Any]:
        return self._page(list(self.server.tools.values()), params, "tools", auth)

    async def _resources_list(
        self, rid: Any, method: str, params: dict[str, Any], env: Envelope, emit: Emit, auth: Any
    ) -> dict[str, Any]:
        return self._page(list(self.server.resources.values()), params, "resources", auth)

    async def _templates_list(
        self, rid: Any, method: str, params: dict[str, Any], env: Envelope, emit: Emit, auth: Any
    ) -> dict[str, Any]:
        return self._page(list(self.server.templates.values()), params, "resourceTemplates", auth)

    async def _prompts_list(
        self, rid: Any, method: str, params: dict[str, Any], env: Envelope, emit: Emit, auth: Any
    ) -> dict[str, Any]:
        return self._page(list(self.server.prompts.values()), params, "prompts", auth)

    # -- the three methods that may ask for input ------------------------------------------------

    def context(
        self,
        rid: Any,
        method: str,
        params: dict[str, Any],
        env: Envelope,
        emit: Emit,
        auth: Any,
        era: str = "modern",
    ) -> Context:
        return Context(
            self.server,
            request_id=rid,
            request_method=method,
            request_params=params,
            protocol_version=env.version,
            client_info=env.client_info,
            client_capabilities=env.capabilities,
            era=era,
            auth=auth,
            log_level=env.log_level,
            emit=emit,
        )

    def open_retry(self, ctx: Context, params: Mapping[str, Any]) -> None:
        """Check the retry envelope and open the request state before any handler runs."""
        if "inputResponses" in params:
            responses = params["inputResponses"]
            if not isinstance(responses, dict):
                raise invalid_params("inputResponses must be an object")
            for key, value in responses.items():
                if not isinstance(value, dict):
                    raise invalid_params(f"Invalid input response for '{key}': expected an object")
            ctx.input_responses = responses
        if "requestState" in params:
            token = params["requestState"]
            policy = self.server.state_policy
            if policy is None:
                if not isinstance(token, str):
                    raise invalid_params("requestState must be a string")
                ctx.state = token
            else:
                # The policy refuses every bad token (non-strings included) with one message.
                load_envelope(ctx, policy.open_for(ctx, token))

    async def run(self, ctx: Context, fn: Callable[..., Any], sig: Any, kwargs: dict[str, Any]) -> Any:
        """Call a component, turning a `ctx.ask` interrupt into an InputRequired outcome."""
        if sig.context_param is not None:
            kwargs[sig.context_param] = ctx
        try:
            if sig.is_async:
                return await fn(**kwargs)
            ctx._sync = True
            if sig.threaded:
                return await _in_thread(ctx, fn, kwargs)
            return fn(**kwargs)
        except AskInterrupt:
            return InputRequired()

    def input_required(self, ctx: Context, outcome: InputRequired) -> dict[str, Any]:
        """Admit an input_required outcome and encode it, sealing the state for the next round."""
        from ..mrtr.admission import admit

        book = ctx._mrtr
        requests = dict(outcome.input_requests)
        if book is not None and book.pending:
            for key, request in book.pending.items():
                requests.setdefault(key, request)
        policy = self.server.state_policy
        token: str | None
        if policy is None:
            if outcome.state is not None and not isinstance(outcome.state, str):
                raise internal_error("with state=None, InputRequired.state must be a string")
            if book is not None and book.answers:
                raise internal_error(
                    "ctx.ask needs a StatePolicy to carry answers between rounds"
                )
            token = outcome.state
        else:
            env = envelope_for(ctx, outcome.state, requests)
            token = None
            if env is not None:
                token = policy.seal_for(ctx, env)
        admit(ctx, requests, token is not None)
        result: dict[str, Any] = {"resultType": "input_required"}
        if requests:
            result["inputRequests"] = requests
        if token is not None:
            result["requestState"] = token
        return result

    async def _tools_call(
        self, rid: Any, method: str, params: dict[str, Any], env: Envelope, emit: Emit, auth: Any
    ) -> dict[str, Any]:
        from .content import ToolError, text, tool_result
        from .schema import ArgumentError

        name = params.get("name")
        if not isinstance(name, str):
            raise invalid_params("tools/call needs a tool name")
        tool = self.server.tools.get(name)
        if tool is None:
            raise invalid_params(f"Unknown tool: {name}")
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise invalid_params("arguments must be an object")
        ctx = self.context(rid, method, params, env, emit, auth)
        self.open_retry(ctx, params)
        sig = tool.signature
        try:
            kwargs = sig.bind(arguments)
        except ArgumentError as exc:
            return {"content": [text(str(exc))], "isError": True}
        try:
            value = await self.run(ctx, tool.fn, sig, kwargs)
        except ToolError as exc:
            return {"content": [text(str(exc))], "isError": True}
        except McpError:
            raise
        except Exception as exc:
            log.exception("tool %r failed", name)
            return {"content": [text(f"Tool {name!r} failed: {exc}")], "isError": True}
        if isinstance(value, InputRequired):
            return self.input_required(ctx, value)
        return tool_result(value, sig)

    async def _prompts_get(
        self, rid: Any, method: str, params: dict[str, Any], env: Envelope, emit: Emit, auth: Any
    ) -> dict[str, Any]:
        from .content import prompt_messages
        from .schema import ArgumentError

        name = params.get("name")
        if not isinstance(name, str):
            raise invalid_params("prompts/get needs a prompt name")
        prompt = self.server.prompts.get(name)
        if prompt is None:
            raise invalid_params(f"Unknown prompt: {name}")
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise invalid_params("arguments must be an object")
        for required in prompt.required:
            if not arguments or required not in arguments:
                raise invalid_params(f"Missing required argument '{required}' for prompt {name}")
        ctx = self.context(rid, method, params, env, emit, auth)
        self.open_retry(ctx, params)
        try:
            kwargs = prompt.signature.bind(arguments)
        except ArgumentError as exc:
            raise invalid_params(str(exc)) from None
        value = await self.run(ctx, prompt.fn, prompt.signature, kwargs)
        if isinstance(value, InputRequired):
            return self.input_required(ctx, value)
        result: dict[str, Any] = {"messages": prompt_messages(value)}
        description = prompt.wire.get("description")
        if description is not None:
            result["description"] = description
        return result

    def find_resource(self, uri: str) -> tuple[Any, dict[str, str]]:
        resource = self.server.resources.get(uri)
        if resource is not None:
            return resource, {}
        for template in self.server.templates.values():
            assert template.template is not None
            variables = template.template.match(uri)
            if variables is not None:
                return template, variables
        raise resource_not_found(uri)

    async def _resources_read(
        self, rid: Any, method: str, params: dict[str, Any], env: Envelope, emit: Emit, auth: Any
    ) -> dict[str, Any]:
        from .content import resource_contents
        from .schema import ArgumentError

        uri = params.get("uri")
        if not isinstance(uri, str):
            raise invalid_params("resources/read needs a uri")
        component, variables = self.find_resource(uri)
        ctx = self.context(rid, method, params, env, emit, auth)
        self.open_retry(ctx, params)
        try:
            kwargs = component.signature.bind(variables)
        except ArgumentError:
            raise resource_not_found(uri) from None
        value = await self.run(ctx, component.fn, component.signature, kwargs)
        if isinstance(value, InputRequired):
            return self.input_required(ctx, value)
        contents = resource_contents(value, uri, component.mime_type)
        if not contents:
            raise resource_not_found(uri)
        server = self.server
        return {
            "contents": contents,
            "ttlMs": component.ttl_ms if component.ttl_ms is not None else server.read_ttl_ms,
            "cacheScope": component.cache_scope or server.read_cache_scope,
        }

    # -- completion and subscriptions ----------------------------------------------------------

    async def _complete(
        self, rid: Any, method: str, params: dict[str, Any], env: Envelope, emit: Emit, auth: Any
    ) -> dict[str, Any]:
        from .server import COMPLETION_LIMIT

        ref = params.get("ref")
        argument = params.get("argument")
        if not isinstance(ref, dict) or ref.get("type") not in ("ref/prompt", "ref/resource"):
            raise invalid_params("completion/complete needs ref of type ref/prompt or ref/resource")
        if not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
            raise invalid_params("completion/complete needs argument {name, value}")
        if ref["type"] == "ref/prompt" and (
            not isinstance(ref.get("name"), str) or ref["name"] not in self.server.prompts
        ):
            raise invalid_params(f"Unknown prompt: {ref.get('name')}")
        context = params.get("context")
        context_args = context.get("arguments", {}) if isinstance(context, dict) else {}
        hook = self.server.completion_handler
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

    async def _listen(
        self, rid: Any, method: str, params: dict[str, Any], env: Envelope, emit: Emit, auth: Any
    ) -> dict[str, Any]:
        wanted = params.get("notifications")
        if not isinstance(wanted, dict):
            raise invalid_params("subscriptions/listen needs a notifications filter object")
        caps = self.server.capabilities()
        honoured: dict[str, Any] = {}
        flags: set[str] = set()
        for flag, cap in (
            ("toolsListChanged", "tools"),
            ("promptsListChanged", "prompts"),
            ("resourcesListChanged", "resources"),
        ):
            if wanted.get(flag) is True and caps.get(cap, {}).get("listChanged"):
                honoured[flag] = True
                flags.add(flag)
        uris: tuple[str, ...] = ()
        subs = wanted.get("resourceSubscriptions")
        if subs is not None:
            if not isinstance(subs, list) or not all(isinstance(u, str) for u in subs):
                raise invalid_params("resourceSubscriptions must be an array of URIs")
            if caps.get("resources", {}).get("subscribe"):
                uris = tuple(subs)
                honoured["resourceSubscriptions"] = list(subs)
        emit(
            {
                "jsonrpc": "2.0",
                "method": "notifications/subscriptions/acknowledged",
                "params": {"_meta": {SUBSCRIPTION_ID: rid}, "notifications": honoured},
            }
        )
        listener = Listener(rid, frozenset(flags), uris, emit)
        self.subscriptions.add(listener)
        try:
            import asyncio  # only streams need the event loop; see transport/stdio.py

            await asyncio.Event().wait()  # until the client goes away (the transport cancels us)
        finally:
            self.subscriptions.remove(listener)
        return {"_meta": {SUBSCRIPTION_ID: rid}}  # pragma: no cover - only reached if woken


def _waits(sig: Any) -> bool:
    return bool(sig.is_async or sig.threaded)


async def _in_thread(ctx: Context, fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """Run a blocking handler in a worker thread; its notifications hop back to the loop."""
    import asyncio

    loop = asyncio.get_running_loop()
    emit = ctx._emit
    if emit is not None:

        def hop(note: dict[str, Any]) -> None:
            loop.call_soon_threadsafe(emit, note)

        ctx._emit = hop
    ctx._loop = loop
    return await asyncio.to_thread(fn, **kwargs)


def _valid_id(rid: Any) -> bool:
    return rid is not None and not isinstance(rid, bool) and isinstance(rid, str | int)


def _encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o{offset}".encode()).decode().rstrip("=")


def _decode_cursor(cursor: Any, total: int) -> int:
    if not isinstance(cursor, str):
        raise invalid_params("Invalid cursor")
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


__all__ = [
    "Core",
    "Envelope",
    "check_version",
    "envelope",
    "error_response",
    "request_shape",
    "INTERNAL_ERROR",
]
