"""`rondo.Client`: one object per server, thin over a transport, the era and the input loop.

    async with rondo.Client("http://127.0.0.1:8000/mcp", on_elicit=ask_user) as client:
        tools = await client.list_tools()
        result = await client.call_tool("book", {"date": "2026-08-01"})

The target picks the transport: a `rondo.Server` object (in memory), an `http(s)://` URL
(Streamable HTTP) or a command (stdio; a string is split like a shell would, a list is used
as is). See docs/client.md.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from rondo.client.cache import ResultCache
from rondo.client.deadlines import Deadline, Deadlines
from rondo.client.errors import ClientError, InputRequiredError, ProtocolError, RequestTimeout
from rondo.client.extension import ClientExtension as ClientExtension  # the old import paths
from rondo.client.extension import ProgressCallback as ProgressCallback
from rondo.client.extension import ResultHandler as ResultHandler
from rondo.client.handlers import ElicitHandler, Handlers, RootsHandler, SampleHandler
from rondo.client.incoming import Answering, on_incoming
from rondo.client.limits import DEFAULT_MAX_INPUT_REQUESTS, positive
from rondo.client.loop import (
    COMPLETE,
    DEFAULT_MAX_ROUNDS,
    INPUT_REQUIRED,
    Unanswerable,
    drive,
    read_interim,
    result_type,
    retry_params,
)
from rondo.client.negotiate import check_legacy_version, choose_era, mutual_modern, supported_from
from rondo.client.paging import list_all
from rondo.client.rounds import RESULT_TYPES, finish
from rondo.client.subscription import Subscription
from rondo.client.transports import Json, Transport, make_transport
from rondo.client.types import (
    CallToolResult,
    Completion,
    DiscoverResult,
    GetPromptResult,
    InitializeResult,
    PendingCall,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Tool,
    convert,
)
from rondo.wire.errors import HEADER_MISMATCH, UNSUPPORTED_VERSION, McpError
from rondo.wire.headers import Binding, InvalidToolHeaders, header_bindings, param_headers
from rondo.wire.meta import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    INPUT_METHODS,
    LEGACY_VERSIONS,
    LOG_LEVEL,
    LOG_LEVELS,
    MODERN_VERSIONS,
    PROGRESS_TOKEN,
    PROTOCOL_VERSION,
    declare,
)

if TYPE_CHECKING:
    from .handle import TaskHandle

log = logging.getLogger("rondo.client")
_T = TypeVar("_T")
# The calls of this client that name a component, with the params field their `Mcp-Name`
# header mirrors; each may be answered input_required. Declared to the wire's registry, which
# the HTTP transport reads (an extension's client half declares its own, as tasks does).
for _method, _field in (("tools/call", "name"), ("prompts/get", "name"), ("resources/read", "uri")):
    declare(_method, _field, may_ask=True)
MRTR_METHODS = INPUT_METHODS
def _version() -> str:
    from rondo import __version__

    return __version__


class Client:
    """An MCP client for one server. Use it as `async with Client(target, ...) as client:`.

    Handlers (`on_elicit`, `on_sample`, `on_roots`, sync or async) answer what the server asks
    for; only installed ones are declared as capabilities (`capabilities` adds what you answer
    yourself with `manual=True`). `protocol` pins a version (a
    2026-07-28 one skips the probe; a 2025 one uses the `initialize` handshake); by default the
    client probes with `server/discover` and falls back to the handshake. `max_rounds` and
    `deadline` bound each input_required exchange, `max_input_requests` the questions in one
    round; `timeout` bounds each request, counted again from each progress notification of a
    request that takes `on_progress`, up to `max_timeout` in all (None: no bound). `auth` signs in to protected HTTP servers:
    `rondo.client.OAuth(...)` or `rondo.client.ClientCredentials(...)`; to a server object in
    memory, a `rondo.auth.Principal` (`rondo.testing.principal(...)`) is the caller. `tasks=True` (or a
    `rondo.tasks.TasksClient(...)`) takes tool calls answered with a task to their end.
    """

    def __init__(
        self,
        target: Any,
        *,
        protocol: str | None = None,
        name: str = "rondo-client",
        version: str | None = None,
        on_elicit: ElicitHandler | None = None,
        on_sample: SampleHandler | None = None,
        on_roots: RootsHandler | Collection[Any] | None = None,
        elicit_modes: Collection[str] = ("form",),
        sampling_tools: bool = False,
        capabilities: Mapping[str, Any] | None = None,
        max_rounds: int = DEFAULT_MAX_ROUNDS,
        max_input_requests: int = DEFAULT_MAX_INPUT_REQUESTS,
        deadline: float | None = None,
        timeout: float | None = 60.0,
        max_timeout: float | None = 600.0,
        probe_timeout: float = 10.0,
        headers: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stderr: Any = None,
        on_notification: Callable[[Json], Any] | None = None,
        extensions: Sequence[ClientExtension] = (),
        auth: Any = None,
        log_level: str | None = None,
        tasks: bool | ClientExtension = False,
        tracing: bool = False,
    ) -> None:
        if tasks:
            from .halves import client_half

            extensions = [*extensions, tasks if not isinstance(tasks, bool) else client_half("tasks").TasksClient()]
        self.tasks = tasks is not False  # the tasks extension (docs/tasks.md) was asked for
        if log_level is not None and log_level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {log_level!r} (one of {', '.join(LOG_LEVELS)})")
        # Server log messages at this level and above (`notifications/message`, handed to
        # `on_notification`): per request in `_meta` on 2026-07-28, `logging/setLevel` on 2025.
        self.log_level = log_level
        if protocol not in (None, "auto", *MODERN_VERSIONS, *LEGACY_VERSIONS):
            raise ValueError(f"unknown protocol version {protocol!r}")
        self.protocol = None if protocol == "auto" else protocol
        self.client_info: Json = {"name": name, "version": version or _version()}
        declared = dict(capabilities or {})
        self.result_types: dict[str, ResultHandler] = {}
        self._call_hooks = [hook for ext in extensions
                            if (hook := getattr(ext, "on_call_tool", None)) is not None]
        for ext in extensions:
            declared.setdefault("extensions", {})[ext.name] = dict(ext.capability)
            for kind, handle in ext.result_types.items():
                if kind in (COMPLETE, INPUT_REQUIRED) or kind in self.result_types:
                    raise ValueError(f"resultType {kind!r} is already handled")
                self.result_types[kind] = handle
        self.handlers = Handlers(on_elicit=on_elicit, on_sample=on_sample, on_roots=on_roots,
                                 elicit_modes=elicit_modes, sampling_tools=sampling_tools,
                                 extra_capabilities=declared)
        self.max_rounds = max_rounds
        self.max_input_requests = positive("max_input_requests", max_input_requests)
        # tracing=True: put the current W3C trace context and baggage in every request's _meta.
        self._inject: Callable[[dict[str, Any]], None] | None = None
        if tracing:
            from ..core.tracing import inject, require_otel

            require_otel()
            self._inject = inject
        self.deadline = deadline
        self.timeout = timeout
        if max_timeout is not None and not max_timeout > 0:
            raise ValueError("max_timeout must be a positive number of seconds or None")
        self.max_timeout = max_timeout
        # progress token -> what a progress notification calls: push the request's deadline on.
        self._extend: dict[Any, Callable[[], None]] = {}
        self._deadlines: Deadlines | None = None  # made on the first request, per loop
        self.probe_timeout = probe_timeout
        self.on_notification = on_notification
        # auth hook: an httpx.Auth (rondo.client.OAuth, ClientCredentials) for HTTP targets.
        self.transport: Transport = make_transport(target, headers=headers, env=env, cwd=cwd, stderr=stderr,
                                                   auth=auth)
        self.cache = ResultCache()
        self.era: str | None = None  # "modern" or "legacy" once connected
        self.protocol_version: str | None = None
        self.server_info: Json | None = None
        self.server_capabilities: Json = {}
        self.instructions: str | None = None
        self._ids = itertools.count(1)
        self._progress: dict[Any, ProgressCallback] = {}
        self._subscriptions: dict[Any, Subscription] = {}
        # The server's requests being answered, by id (its `notifications/cancelled` ends one).
        self._answering = Answering()
        self._tool_headers: dict[str, list[Binding]] = {}
        self._bad_tools: dict[str, str] = {}
        self._tools_listed = False
        self._connected = False

    @property
    def _carries_headers(self) -> bool:
        # A transport of the caller's own that says nothing carries no HTTP headers.
        return bool(getattr(self.transport, "carries_headers", False))

    # -- lifecycle -----------------------------------------------------------------------------

    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self) -> None:
        """Start the transport and settle the era (probe, or the handshake when pinned legacy)."""
        if self._connected:
            return
        await self.transport.start(self._on_incoming)
        self._connected = True
        try:
            if self.protocol in MODERN_VERSIONS:
                self._go_modern(self.protocol)
            elif self.protocol in LEGACY_VERSIONS:
                await self._initialize(self.protocol)
            else:
                era = await choose_era(self._probe, timeout=self.probe_timeout)
                if era.modern:
                    assert era.version is not None
                    self._go_modern(era.version)
                    if era.discover is not None:
                        self._adopt_discover(era.discover)
                else:
                    await self._initialize(LEGACY_VERSIONS[0])
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        for sub in list(self._subscriptions.values()):
            sub._finish()
        if self._connected:
            self._connected = False
            await self.transport.close()

    def _go_modern(self, version: str) -> None:
        self.era, self.protocol_version = "modern", version

    async def _probe(self, version: str) -> Json:
        self._go_modern(version)
        result = await self._rpc("server/discover", {})
        return result

    def _adopt_discover(self, result: Json) -> None:
        found = convert(result, DiscoverResult, "server/discover result")
        self.server_capabilities = found.capabilities
        self.instructions = found.instructions
        self.server_info = found.server_info or (result.get("serverInfo") if isinstance(result.get("serverInfo"), dict) else None)

    async def _initialize(self, version: str) -> None:
        self.era, self.protocol_version = "legacy", None
        result = await self._rpc("initialize", {
            "protocolVersion": version,
            "capabilities": self.handlers.capabilities(),
            "clientInfo": self.client_info,
        })
        init = convert(result, InitializeResult, "initialize result")
        self.protocol_version = check_legacy_version(init.protocol_version)
        self.transport.legacy_version = self.protocol_version
        self.server_info = init.server_info
        self.server_capabilities = init.capabilities
        self.instructions = init.instructions
        await self.transport.notify({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await self.transport.after_handshake()
        if self.log_level is not None and "logging" in (self.server_capabilities or {}):
            await self._rpc("logging/setLevel", {"level": self.log_level})

    # -- one request ---------------------------------------------------------------------------

    def _envelope(self, params: Mapping[str, Any], progress_token: Any) -> Json:
        out = dict(params)
        meta = dict(out.get("_meta") or {})
        if self.era == "modern":
            meta[PROTOCOL_VERSION] = self.protocol_version
            meta[CLIENT_INFO] = self.client_info
            # A request that says its own (a proxy relaying its client's) keeps them (and the
            # handlers' are not even computed for it).
            if CLIENT_CAPABILITIES not in meta:
                meta[CLIENT_CAPABILITIES] = self.handlers.capabilities()
            if self.log_level is not None:
                meta[LOG_LEVEL] = self.log_level
        if progress_token is not None:
            meta[PROGRESS_TOKEN] = progress_token
        if self._inject is not None:
            self._inject(meta)
        if meta:
            out["_meta"] = meta
        return out

    async def _rpc(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        on_progress: ProgressCallback | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None | bool = True,
        request_id: Any = None,
    ) -> Json:
        """Send one request (fresh id) and return its result dict, or raise its McpError.

        A -32022 naming a modern version we speak switches to it and resends once.
        """
        if not self._connected:
            raise ClientError("client is not connected (use `async with Client(...)`)")
        limit = self.timeout if timeout is True else timeout
        for attempt in range(2):
            rid = request_id if request_id is not None and attempt == 0 else next(self._ids)
            token = f"progress-{rid}" if on_progress is not None else None
            message = {"jsonrpc": "2.0", "id": rid, "method": method,
                       "params": self._envelope(params, token)}
            if token is not None:
                assert on_progress is not None
                self._progress[token] = on_progress
            # The deadline: cancels this task when its time is up, on the client's one timer
            # (client/deadlines.py; asyncio.timeout's context manager, or a timer per request,
            # costs every relayed call), armed and read here rather than in a coroutine of its
            # own (one fewer per wake).
            timer = None if limit is None else self._deadline(limit, token)
            try:
                response = await self.transport.request(message, headers)
            except asyncio.CancelledError:
                if timer is not None and timer.expired and timer.task.uncancel() <= timer.cancelling:
                    raise self._timed_out(message, limit, timer) from None
                raise
            finally:
                if timer is not None:
                    timer.end()
                if token is not None:
                    self._progress.pop(token, None)
                    self._extend.pop(token, None)
            error = response.get("error")
            if error is not None:
                exc = _mcp_error(error)
                if self.era == "modern" and exc.code == UNSUPPORTED_VERSION and attempt == 0:
                    chosen = mutual_modern(supported_from(exc))
                    if chosen is not None:
                        self.protocol_version = chosen
                        continue
                raise exc
            result = response.get("result")
            if not isinstance(result, dict):
                raise ProtocolError(f"server's answer to {method} has no result object")
            kind = result.get("resultType", COMPLETE)
            if type(kind) is not str:
                kind = result_type(result)
            if kind not in (COMPLETE, INPUT_REQUIRED) and kind not in self.result_types:
                raise ProtocolError(f"server answered {method} with unknown resultType {kind!r}")
            if kind == INPUT_REQUIRED and method not in MRTR_METHODS:
                raise ProtocolError(f"server answered {method} with input_required, which {method} cannot return")
            return result
        raise AssertionError("unreachable")

    def _deadline(self, limit: float, token: Any) -> Deadline:
        """This request's deadline, `limit` seconds from now (moved on by progress when it
        carries a progress token, up to `max_timeout`), on the client's one timer."""
        deadlines = self._deadlines
        loop = asyncio.get_running_loop()
        if deadlines is None or deadlines.loop is not loop:
            deadlines = self._deadlines = Deadlines(loop)
        task = asyncio.current_task()
        assert task is not None
        timer = deadlines.add(task, limit)
        if token is not None:
            cap = None if self.max_timeout is None else loop.time() + max(self.max_timeout, limit)

            def extend() -> None:  # progress: the server is working, count `limit` from now
                when = loop.time() + limit
                timer.move(when if cap is None else min(when, cap))

            self._extend[token] = extend
        return timer

    def _timed_out(self, message: Json, limit: float | None, timer: Deadline) -> RequestTimeout:
        if timer.moved:
            return RequestTimeout(
                f"no answer to {message['method']} (id {message['id']!r}) within {limit} s "
                f"of its last progress, or {self.max_timeout} s in all (max_timeout)")
        return RequestTimeout(
            f"no answer to {message['method']} (id {message['id']!r}) within {limit} s")

    def follow_stream(self, subscription: Subscription) -> str:
        """A new listen stream's request id; its notifications go to `subscription`."""
        stream_id = f"listen-{next(self._ids)}"
        self._subscriptions[stream_id] = subscription
        return stream_id

    def unfollow_stream(self, stream_id: str) -> None:
        self._subscriptions.pop(stream_id, None)

    async def request(self, method: str, params: Mapping[str, Any] | None = None, *,
                      timeout: float | None | bool = True) -> Json:
        """Any request, raw: the result dict (the envelope is added for you). `timeout` None
        waits as long as the server takes (True: the client's). The facade an extension's
        client half uses."""
        return await self._rpc(method, params or {}, timeout=timeout)

    async def call_raw(self, name: str, arguments: Mapping[str, Any] | None = None) -> Json:
        """Call a tool, its input_required rounds answered by the handlers, and return the
        final result dict as sent (any `resultType`, untouched by extensions)."""
        params: Json = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        headers = await self._param_headers(name, params.get("arguments"))
        send = self._sender("tools/call", None, headers)
        return await drive(send, params, answer=self.handlers.answer_all, max_rounds=self.max_rounds,
                           deadline=self.deadline)

    # -- notifications and server requests -------------------------------------------------------

    async def _on_incoming(self, message: Json) -> Json | None:
        return await on_incoming(self, message)  # client/incoming.py

    def forget_tool_headers(self) -> None:
        """The tool list changed: learn each tool's `Mcp-Param` headers again before a call."""
        self._tools_listed = False

    # -- discovery and lists -------------------------------------------------------------------

    async def discover(self) -> DiscoverResult:
        """`server/discover` (2026-07-28 servers): versions, capabilities, instructions."""
        result = self.cache.get("server/discover", None) or await self._rpc("server/discover", {})
        self.cache.put("server/discover", None, result)
        self._adopt_discover(result)
        return convert(result, DiscoverResult, "server/discover result")

    async def list_tools(self, *, refresh: bool = False) -> list[Tool]:
        """Every tool (all pages). On HTTP, tools whose `x-mcp-header` annotations break the
        rules are left out (and logged), as the spec requires."""
        tools = [convert(t, Tool, "tool") for t in await list_all(self, "tools/list", "tools", refresh)]
        kept: list[Tool] = []
        self._tool_headers.clear()
        self._bad_tools.clear()
        for tool in tools:
            try:
                bindings = header_bindings(tool.input_schema)
            except InvalidToolHeaders as exc:
                if self._carries_headers:
                    log.warning("dropping tool %r: %s", tool.name, exc)
                    self._bad_tools[tool.name] = str(exc)
                    continue
                bindings = []
            self._tool_headers[tool.name] = bindings
            kept.append(tool)
        self._tools_listed = True
        return kept

    async def list_resources(self, *, refresh: bool = False) -> list[Resource]:
        items = await list_all(self, "resources/list", "resources", refresh)
        return [convert(r, Resource, "resource") for r in items]

    async def list_resource_templates(self, *, refresh: bool = False) -> list[ResourceTemplate]:
        items = await list_all(self, "resources/templates/list", "resourceTemplates", refresh)
        return [convert(r, ResourceTemplate, "resource template") for r in items]

    async def list_prompts(self, *, refresh: bool = False) -> list[Prompt]:
        items = await list_all(self, "prompts/list", "prompts", refresh)
        return [convert(p, Prompt, "prompt") for p in items]

    # -- the three input_required methods ------------------------------------------------------

    @overload
    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, manual: Literal[False] = False,
        on_progress: ProgressCallback | None = None,
    ) -> CallToolResult: ...

    @overload
    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, manual: bool,
        on_progress: ProgressCallback | None = None,
    ) -> CallToolResult | PendingCall: ...

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        manual: bool = False,
        on_progress: ProgressCallback | None = None,
    ) -> CallToolResult | PendingCall:
        """Call a tool. Input requests are answered by the handlers unless `manual=True`, in
        which case a `PendingCall` comes back for you to answer and `resume`."""
        params: Json = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        if not manual:
            for hook in self._call_hooks:  # an extension may answer it (2025-11-25 tasks)
                answered: CallToolResult | None = await hook(self, name, params)
                if answered is not None:
                    return answered
        headers = await self._param_headers(name, params.get("arguments"))
        try:
            called: CallToolResult | PendingCall = await self._mrtr(
                "tools/call", params, manual, on_progress, headers)
            return called
        except McpError as exc:
            if exc.code != HEADER_MISMATCH or not self._carries_headers:
                raise
        # The server says our Mcp-Param headers are off: the schema may have changed.
        await self.list_tools(refresh=True)
        headers = await self._param_headers(name, params.get("arguments"))
        again: CallToolResult | PendingCall = await self._mrtr(
            "tools/call", params, manual, on_progress, headers)
        return again

    def task(self, task_id: str) -> TaskHandle:
        """A handle on a task by id (one this client started, or another process): poll,
        update, cancel or wait for it."""
        from .halves import client_half

        handle: TaskHandle = client_half("tasks").TaskHandle(self, task_id)
        return handle

    async def start_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> TaskHandle | CallToolResult:
        """Call a tool without following a task: its MRTR rounds are answered by the handlers,
        then a `TaskHandle` comes back if the server made a task (else the ordinary result)."""
        from .halves import client_half

        started: TaskHandle | CallToolResult = await client_half("tasks").start_tool(self, name, arguments)
        return started

    @overload
    async def read_resource(
        self, uri: str, *, manual: Literal[False] = False, on_progress: ProgressCallback | None = None,
        refresh: bool = False,
    ) -> ReadResourceResult: ...

    @overload
    async def read_resource(
        self, uri: str, *, manual: bool, on_progress: ProgressCallback | None = None, refresh: bool = False,
    ) -> ReadResourceResult | PendingCall: ...

    async def read_resource(
        self, uri: str, *, manual: bool = False, on_progress: ProgressCallback | None = None,
        refresh: bool = False,
    ) -> ReadResourceResult | PendingCall:
        if not refresh and not manual:
            cached = self.cache.get("resources/read", uri)
            if cached is not None:
                return convert(cached, ReadResourceResult, "resources/read result")
        read: ReadResourceResult | PendingCall = await self._mrtr(
            "resources/read", {"uri": uri}, manual, on_progress, None)
        return read

    @overload
    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, manual: Literal[False] = False,
        on_progress: ProgressCallback | None = None,
    ) -> GetPromptResult: ...

    @overload
    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, manual: bool,
        on_progress: ProgressCallback | None = None,
    ) -> GetPromptResult | PendingCall: ...

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, manual: bool = False,
        on_progress: ProgressCallback | None = None,
    ) -> GetPromptResult | PendingCall:
        params: Json = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        got: GetPromptResult | PendingCall = await self._mrtr(
            "prompts/get", params, manual, on_progress, None)
        return got

    async def resume(
        self,
        pending: PendingCall,
        responses: Mapping[str, Any] | None = None,
        *,
        manual: bool = False,
        on_progress: ProgressCallback | None = None,
        raw: bool = False,
    ) -> Any:
        """Continue a paused call: send `responses` (or, when None, the handlers' answers) with
        the echoed state, then finish the exchange (or pause again with `manual=True`).
        `raw=True` returns the final result as the server sent it (the dict, `resultType`
        complete, after any extension's result type) instead of its typed view: a relay that
        passes it on skips building a `CallToolResult` it would take apart again."""
        method = pending.method
        if method not in MRTR_METHODS:
            raise ValueError(f"cannot resume {method}")
        headers = None
        if method == "tools/call":
            name, arguments = pending.params.get("name", ""), pending.params.get("arguments")
            headers = self._known_param_headers(name, arguments)
            if headers is None:
                headers = await self._param_headers(name, arguments)
        if responses is None and pending.input_requests:
            try:
                responses = await self.handlers.answer_all(pending.input_requests)
            except Unanswerable as exc:
                raise InputRequiredError("unanswerable", str(exc), last_result=None, rounds=pending.rounds) from None
        result = await self._rpc(method, retry_params(pending.params, responses, pending.request_state),
                                 on_progress=on_progress, headers=headers)
        if manual:  # a relay's round: the usual answers without the finishing layers
            kind = result.get("resultType", COMPLETE)
            if kind == COMPLETE:
                return result if raw else convert(result, RESULT_TYPES[method], f"{method} result")
            if kind == INPUT_REQUIRED:  # never an extension's (the constructor refuses it)
                rounds = pending.rounds + 1
                try:
                    requests, state = read_interim(result)
                except ValueError as exc:
                    raise InputRequiredError(
                        "malformed", f"server sent a malformed input_required result: {exc}",
                        last_result=result, rounds=rounds) from None
                return PendingCall(method=method, params=pending.params, input_requests=requests,
                                   request_state=state, rounds=rounds)
        send = self._sender(method, on_progress, headers)
        done = await finish(self, method, pending.params, result, pending.rounds + 1, manual, send, raw=raw)
        return done

    def _sender(self, method: str, on_progress: ProgressCallback | None, headers: Mapping[str, str] | None) -> Any:
        async def send(params: Json) -> Json:
            return await self._rpc(method, params, on_progress=on_progress, headers=headers)
        return send

    async def _mrtr(
        self, method: str, params: Json, manual: bool, on_progress: ProgressCallback | None,
        headers: Mapping[str, str] | None,
    ) -> Any:
        send = self._sender(method, on_progress, headers)
        result = await send(params)
        if result_type(result) == COMPLETE and method == "resources/read":
            self.cache.put(method, params["uri"], result)  # first-round answers only
        return await finish(self, method, params, result, 0, manual, send)

    def _known_param_headers(self, name: str, arguments: Any) -> dict[str, str] | None:
        """`_param_headers` without a wait when no tool list is needed for them, else None."""
        if self.era != "modern" or not self._carries_headers:
            return {}
        bindings = self._tool_headers.get(name)
        if bindings is None or name in self._bad_tools:
            return None
        return param_headers(bindings, arguments) if bindings else {}

    async def _param_headers(self, name: str, arguments: Any) -> dict[str, str]:
        if not self._carries_headers or self.era != "modern":
            return {}
        if name not in self._tool_headers and not self._tools_listed:
            await self.list_tools()
        if name in self._bad_tools:
            raise ClientError(f"tool {name!r} was dropped: {self._bad_tools[name]}")
        return param_headers(self._tool_headers.get(name, []), arguments)

    # -- completion and subscriptions ----------------------------------------------------------

    async def complete(
        self, ref: Mapping[str, Any], argument: str, value: str, *, context: Mapping[str, str] | None = None,
    ) -> Completion:
        """`completion/complete` for `ref` (`{"type": "ref/prompt", "name": ...}` or
        `{"type": "ref/resource", "uri": ...}`)."""
        params: Json = {"ref": dict(ref), "argument": {"name": argument, "value": value}}
        if context is not None:
            params["context"] = {"arguments": dict(context)}
        result = await self._rpc("completion/complete", params)
        completion = result.get("completion")
        if not isinstance(completion, dict):
            raise ProtocolError("completion/complete result has no completion object")
        return convert(completion, Completion, "completion")

    def listen(
        self, *, tools: bool = False, prompts: bool = False, resources: bool = False,
        resource_uris: Sequence[str] = (), task_ids: Sequence[str] = (),
    ) -> Subscription:
        """A `subscriptions/listen` stream: `async with client.listen(tools=True) as sub:` then
        `async for note in sub:`. Leaving the block ends the subscription. `task_ids`: the
        tasks extension's `notifications/tasks` for those tasks (a client that declared tasks)."""
        wanted: Json = {}
        if tools:
            wanted["toolsListChanged"] = True
        if prompts:
            wanted["promptsListChanged"] = True
        if resources:
            wanted["resourcesListChanged"] = True
        if resource_uris:
            wanted["resourceSubscriptions"] = list(resource_uris)
        if task_ids:
            wanted["taskIds"] = list(task_ids)
        return Subscription(self, wanted)


def _mcp_error(error: Any) -> McpError:
    if not isinstance(error, dict) or not isinstance(error.get("code"), int):
        raise ProtocolError(f"server sent a malformed JSON-RPC error: {error!r}")
    return McpError(error["code"], str(error.get("message", "")), error.get("data"))
