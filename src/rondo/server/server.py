"""`rondo.Server`: the registry users decorate. It holds components and configuration only;
dispatch lives in `core.py` (with the method table in `methods.py`), transports in
`rondo.transport`."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

from ..wire.uritemplate import UriTemplate
from .components import (
    TASK_MODES,
    Prompt,
    Resource,
    Tool,
    check_cache,
    check_tags,
    describe,
    tool_wire,
)
from .lifespan import Lifespan
from .middleware import Middleware, check_middleware

if TYPE_CHECKING:
    from ..auth import ResourceServer
    from ..core.core import Core
    from ..state import StatePolicy
    from .extension import Extension
    from .method import Handler, Method, Wrap

F = TypeVar("F", bound=Callable[..., Any])

_DEFAULT: Any = object()
# `rondo.state.keys.ENV_KEYS`, read here without importing rondo.state (tests hold them equal).
STATE_KEYS_ENV = "RONDO_STATE_KEYS"
COMPLETION_LIMIT = 100
DEFAULT_MAX_URI_LENGTH = 8192


def _thread(sig: Any, thread: bool, what: str) -> None:
    if thread:
        if sig.is_async:
            raise ValueError(f"{what}: thread=True is for plain def handlers, not async ones")
        sig.threaded = True


class Server:
    """An MCP server: register tools, resources and prompts, then serve it over any transport.

    `state` is the request-state policy: by default a `StatePolicy` with keys from
    `RONDO_STATE_KEYS`, or a random per-process key; `None` turns the boundary off.
    `mask_errors` (default True) answers an unexpected exception in a tool with "internal
    error" and a correlation id the server log carries with the traceback; `ToolError` text
    always passes through. `max_uri_length` bounds the URIs `resources/read` accepts;
    `max_listen_streams` / `max_listen_per_principal` the open `subscriptions/listen` streams.
    `auth` is a `rondo.auth.ResourceServer`: HTTP then requires OAuth bearer tokens (stdio
    stays unauthenticated: its credentials come from the environment).
    `middleware` is a list of `async (request, call_next)` run around every request, first
    outermost (docs/middleware.md). `tracing=True` (or an OpenTelemetry `TracerProvider`)
    gives every request a span; it needs `opentelemetry-api` (docs/tracing.md).
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        state: StatePolicy | None = _DEFAULT,
        page_size: int = 100,
        list_ttl_ms: int = 300_000,
        list_cache_scope: str = "public",
        read_ttl_ms: int = 0,
        read_cache_scope: str = "private",
        discover_ttl_ms: int = 300_000,
        server_info_in_results: bool = True,
        mask_errors: bool = True,
        max_uri_length: int = DEFAULT_MAX_URI_LENGTH,
        max_listen_streams: int = 1000,
        max_listen_per_principal: int = 100,
        auth: ResourceServer | None = None,
        warn_undocumented: bool = True,
        middleware: Sequence[Middleware] | None = None,
        tracing: Any = None,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError("a server needs a non-empty name")
        if not isinstance(page_size, int) or page_size < 1:
            raise ValueError("page_size must be a positive integer")
        check_cache(list_ttl_ms, list_cache_scope)
        check_cache(read_ttl_ms, read_cache_scope)
        check_cache(discover_ttl_ms, None)
        if not isinstance(max_uri_length, int) or max_uri_length < 1:
            raise ValueError("max_uri_length must be a positive integer")
        self.name = name
        self.version = version
        self.instructions = instructions
        info: dict[str, Any] = {"name": name, "version": version}
        if title is not None:
            info["title"] = title
        if website_url is not None:
            info["websiteUrl"] = website_url
        if icons is not None:
            info["icons"] = icons
        self.info = info
        self.page_size = page_size
        self.list_ttl_ms = list_ttl_ms
        self.list_cache_scope = list_cache_scope
        self.read_ttl_ms = read_ttl_ms
        self.read_cache_scope = read_cache_scope
        self.discover_ttl_ms = discover_ttl_ms
        self.server_info_in_results = server_info_in_results
        # Unexpected exceptions in tools answer "internal error" plus a reference the log
        # carries with the traceback; False (development only) sends their text to the client.
        self.mask_errors = bool(mask_errors)
        self.max_uri_length = max_uri_length
        for label, value in (("max_listen_streams", max_listen_streams),
                             ("max_listen_per_principal", max_listen_per_principal)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{label} must be a positive integer")
        self.max_listen_streams = max_listen_streams
        self.max_listen_per_principal = max_listen_per_principal
        # A tool without a docstring or type hints gets a one-line warning when registered.
        self.warn_undocumented = warn_undocumented
        self.middleware = check_middleware(middleware, "Server")
        self.tracing = check_tracing(tracing)
        if state is _DEFAULT and os.environ.get(STATE_KEYS_ENV, "").strip():
            from ..state import StatePolicy

            state = StatePolicy.from_env(os.environ)  # configured keys: checked now
        # Left at _DEFAULT (no keys configured), the random-key policy is made when first used:
        # a stdio server that never seals a state starts without loading rondo.state.
        self._state_policy: StatePolicy | None = state
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}
        self.templates: dict[str, Resource] = {}
        self.prompts: dict[str, Prompt] = {}
        self.completion_handler: Callable[..., Any] | None = None
        # Lists advertised even while empty (`advertise`): a gateway's upstreams bring theirs later.
        self.advertised: frozenset[str] = frozenset()
        self.extra_methods: list[Method] = []
        self.wraps: list[Wrap] = []  # extensions' interceptors around rows of the table
        self.extensions: dict[str, Extension] = {}
        # What each installed extension put in: (its rows, its wraps, its context/server calls).
        self._installed: dict[str, tuple[Any, Any, Any]] = {}
        self._lifespan = Lifespan()
        self._core: Core | None = None
        # Who follows this registry (the `Core`): called with (what changed, its detail).
        self._listeners: list[Callable[[str, Any], None]] = []
        # What `ctx.start_task`, `ctx.user_state`, `server.emit` call: installed extensions' own.
        self.context_calls: dict[str, Callable[..., Any]] = {}
        self.server_calls: dict[str, Callable[..., Any]] = {}
        # rondo.auth hook: the resource server, and scopes=[...] per component, keyed
        # ("tool", name) / ("prompt", name) / ("resource", uri or template).
        self.auth = auth
        self.component_scopes: dict[tuple[str, str], tuple[str, ...]] = {}
        # The scopes a method row needs beyond the server-wide ones (`Method(scopes=...)`).
        self.method_scopes: dict[str, tuple[str, ...]] = {}

    # -- registration --------------------------------------------------------------------------

    @overload
    def tool(self, fn: F, /) -> F: ...
    @overload
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        thread: bool = False,
        scopes: list[str] | None = None,
        task: str | None = None,
        middleware: Sequence[Middleware] | None = None,
        tags: Iterable[str] | None = None,
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        fn: Callable[..., Any] | None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        thread: bool = False,
        scopes: list[str] | None = None,
        task: str | None = None,
        middleware: Sequence[Middleware] | None = None,
        tags: Iterable[str] | None = None,
    ) -> Any:
        """Register a function as a tool; its parameters' type hints become the input schema.

        Plain `def` handlers run on the event loop, so they must not block; pass `thread=True`
        for one that does (file or network I/O, heavy computation) to run it in a worker thread.
        `task="optional"` or `"required"` lets it answer with a task (docs/tasks.md): what the
        handler does after `ctx.start_task()` runs as the task. `tags={"read"}` labels it for
        mounts and proxies that filter by tags (`tool.tags`; never sent to clients).
        """
        if task is not None and task not in TASK_MODES:
            raise ValueError(f"task must be None, 'optional' or 'required', got {task!r}")

        own_middleware = check_middleware(middleware, f"tool {name or ''}".strip())
        own_tags = check_tags(tags, f"tool {name or ''}".strip())

        def register(f: F) -> F:
            from .schema import tool_signature

            tool_name = name or f.__name__
            if tool_name in self.tools:
                raise ValueError(f"tool {tool_name!r} is registered twice")
            if input_schema is not None and input_schema.get("type") != "object":
                raise ValueError(f"tool {tool_name!r}: input_schema must have type 'object'")
            sig = tool_signature(f, input_schema=input_schema, output_schema=output_schema)
            # A task tool's plain def goes on running after the call is answered: in a thread.
            _thread(sig, thread or (task is not None and not sig.is_async), tool_name)
            described = describe(f, description)
            if self.warn_undocumented and (
                not described or (input_schema is None and _unannotated(f, sig.context_param))
            ):
                from .undocumented import warn_undocumented  # only a tool that needs the hint

                warn_undocumented(tool_name, f, described, sig.context_param,
                                  input_schema is not None, depth)
            wire = tool_wire(
                tool_name,
                title=title,
                description=describe(f, description),
                input_schema=sig.input_schema,
                output_schema=sig.output_schema,
                annotations=annotations,
                icons=icons,
                meta=meta,
            )
            self._scopes("tool", tool_name, scopes)
            self.tools[tool_name] = Tool(tool_name, f, sig, wire, task, own_middleware, own_tags)
            if task is not None and self._core is not None:
                self.settle()  # serving already: the option's extension is wanted now
            self._changed("tools")
            return f

        depth = 4 if fn is not None else 3  # frames up to the user's decorator line
        return register(fn) if fn is not None else register

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        ttl_ms: int | None = None,
        cache_scope: str | None = None,
        thread: bool = False,
        scopes: list[str] | None = None,
        middleware: Sequence[Middleware] | None = None,
        tags: Iterable[str] | None = None,
    ) -> Callable[[F], F]:
        """Register a resource at a static URI, or a template such as `notes://{id}`.

        `thread=True` runs a blocking plain `def` handler in a worker thread.
        """
        check_cache(ttl_ms, cache_scope)
        if not isinstance(uri, str) or ":" not in uri:
            raise ValueError(f"resource URI must be absolute (have a scheme), got {uri!r}")
        own_middleware = check_middleware(middleware, f"resource {uri}")
        own_tags = check_tags(tags, f"resource {uri}")

        def register(f: F) -> F:
            from .schema import template_signature

            wire: dict[str, Any] = {}
            if "{" in uri:
                template = UriTemplate(uri)
                if uri in self.templates:
                    raise ValueError(f"resource template {uri!r} is registered twice")
                sig = template_signature(f, template.variables)
                wire["uriTemplate"] = uri
            else:
                if uri in self.resources:
                    raise ValueError(f"resource {uri!r} is registered twice")
                sig = template_signature(f, ())
                wire["uri"] = uri
            _thread(sig, thread, uri)
            self._scopes("resource", uri, scopes)
            wire["name"] = name or f.__name__
            for key, value in (
                ("title", title),
                ("description", describe(f, description)),
                ("mimeType", mime_type),
                ("size", size if "{" not in uri else None),
                ("annotations", annotations),
                ("icons", icons),
                ("_meta", meta),
            ):
                if value is not None:
                    wire[key] = value
            if "{" in uri:
                self.templates[uri] = Resource(
                    uri, f, sig, wire, mime_type, ttl_ms, cache_scope, template, own_middleware,
                    own_tags)
            else:
                self.resources[uri] = Resource(uri, f, sig, wire, mime_type, ttl_ms, cache_scope,
                                               middleware=own_middleware, tags=own_tags)
            self._changed("resources")
            return f

        return register

    @overload
    def prompt(self, fn: F, /) -> F: ...
    @overload
    def prompt(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        thread: bool = False,
        scopes: list[str] | None = None,
        middleware: Sequence[Middleware] | None = None,
        tags: Iterable[str] | None = None,
    ) -> Callable[[F], F]: ...

    def prompt(
        self,
        fn: Callable[..., Any] | None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        thread: bool = False,
        scopes: list[str] | None = None,
        middleware: Sequence[Middleware] | None = None,
        tags: Iterable[str] | None = None,
    ) -> Any:
        """Register a prompt; its string parameters become the prompt's arguments.

        `thread=True` runs a blocking plain `def` handler in a worker thread.
        """

        own_middleware = check_middleware(middleware, f"prompt {name or ''}".strip())
        own_tags = check_tags(tags, f"prompt {name or ''}".strip())

        def register(f: F) -> F:
            from .schema import prompt_signature

            prompt_name = name or f.__name__
            if prompt_name in self.prompts:
                raise ValueError(f"prompt {prompt_name!r} is registered twice")
            sig, arguments = prompt_signature(f)
            _thread(sig, thread, prompt_name)
            wire: dict[str, Any] = {"name": prompt_name}
            for key, value in (
                ("title", title),
                ("description", describe(f, description)),
                ("icons", icons),
                ("_meta", meta),
            ):
                if value is not None:
                    wire[key] = value
            if arguments:
                wire["arguments"] = arguments
            self._scopes("prompt", prompt_name, scopes)
            self.prompts[prompt_name] = Prompt(prompt_name, f, sig, wire, own_middleware, own_tags)
            self._changed("prompts")
            return f

        return register(fn) if fn is not None else register

    def _scopes(self, kind: str, key: str, scopes: list[str] | None) -> None:
        """`scopes=[...]` on a decorator: what a token needs to use the component (rondo.auth)."""
        if scopes is None:
            return
        from ..auth.scopes import check_scopes

        self.component_scopes[(kind, key)] = check_scopes(scopes, f"{kind} {key!r}")

    def lifespan(self, fn: F) -> F:
        """Register a start-up/shutdown hook: `async def hook(server): ...; yield {"db": pool};
        ...` (code before `yield` runs at start-up, after it at shutdown). What it yields is
        `ctx.lifespan` in handlers. See `started()` for when hooks run."""
        self._lifespan.add(fn)
        return fn

    def started(self) -> Any:
        """`async with server.started():` runs the lifespan hooks around the block (the
        transports do this; use it in tests). Nested entries are no-ops."""
        return self._lifespan.running(self)

    def completion(self, fn: F) -> F:
        """Register the completion hook: `fn(ref, argument, context_arguments)`.

        `ref` is the request's reference (`{"type": "ref/prompt", "name": ...}` or
        `{"type": "ref/resource", "uri": ...}`), `argument` is `{"name", "value"}`. Return a list
        of strings (at most 100 are sent) or a dict with `values`, `total`, `hasMore`.
        """
        self.completion_handler = fn
        return fn

    def method(
        self,
        name: str,
        *,
        era: str | tuple[str, ...] = "both",
        gate: str | None = None,
        suspends: Callable[..., bool] | bool = True,
        name_field: str | None = None,
        may_ask: bool = False,
        scopes: list[str] | None = None,
    ) -> Callable[[Handler], Handler]:
        """Add a JSON-RPC method to this server's table: `async def handler(core, request)`
        returning the result dict (the dialect adds `resultType` and legacy shapes).

        `era` is "both", "modern" or "legacy"; `gate` a server capability that must be
        advertised (else -32601); `suspends` whether answering may wait (True runs it as its
        own task on every transport; a callable `(core, params) -> bool` decides per request).
        `name_field` is the params field its `Mcp-Name` header mirrors over HTTP; `may_ask`
        lets it answer input_required; `scopes` the OAuth scopes a caller needs for it.
        """
        from .method import Method, era_set

        wanted: tuple[str, ...] = ()
        if scopes is not None:
            from ..auth.scopes import check_scopes

            wanted = check_scopes(scopes, f"method {name!r}")

        def register(handler: Handler) -> Handler:
            if suspends is True:
                decide: Any = _always_suspends
            elif suspends is False:
                decide = None
            else:
                decide = suspends
            self._add_method(Method(name, handler, era_set(era), gate, decide,
                                    name_field=name_field, may_ask=may_ask, scopes=wanted))
            return handler

        return register

    def extension(self, extension: Extension) -> Extension:
        """Install a protocol extension: its methods join the table, its capability is
        advertised under `capabilities.extensions` (both eras' handshakes and discover)."""
        name = getattr(extension, "name", None)
        if not isinstance(name, str) or "/" not in name:
            raise ValueError("an extension needs a name like 'vendor.example/feature'")
        if name in self.extensions:
            raise ValueError(f"extension {name!r} is installed twice")
        self.extensions[name] = extension
        filed: list[tuple[dict[str, Callable[..., Any]], str, Callable[..., Any]]] = []
        for table, hook in ((self.context_calls, "context_calls"), (self.server_calls, "server_calls")):
            calls = getattr(extension, hook, None)
            for key, call in (calls() if calls is not None else {}).items():
                table[key] = call
                filed.append((table, key, call))
        rows = list(extension.methods())
        for method in rows:
            self._add_method(method)
        wraps = getattr(extension, "wraps", None)
        added = list(wraps() if wraps is not None else ())
        for wrap in added:
            self.wraps.append(wrap)
            self._tell("wrap", wrap)
        self._installed[name] = (rows, added, filed)
        attach = getattr(extension, "attach", None)  # optional: register components on us
        if attach is not None:
            attach(self)
        try:
            self._tell("extension", extension)  # a mount carrying this server's extensions
        except Exception:
            self.remove_extension(name)  # refused by a follower: not half installed
            raise
        return extension

    def remove_extension(self, name: str) -> Extension:
        """Uninstall the extension named `name`: its rows, wraps, context and server calls leave
        the table (a built-in row it replaced comes back), and its optional `detach(server)`
        hook runs (to take out components its `attach` registered). KeyError if none."""
        extension = self.extensions.pop(name)
        rows, wraps, filed = self._installed.pop(name, ((), (), ()))
        for table, key, call in filed:
            if table.get(key) is call:
                del table[key]
        for wrap in wraps:
            self.wraps.remove(wrap)
            self._tell("unwrap", wrap)
        for method in rows:
            self.extra_methods.remove(method)
            self.method_scopes.pop(method.name, None)
            self._tell("unmethod", method)
        detach = getattr(extension, "detach", None)
        if detach is not None:
            detach(self)
        self._tell("unextension", extension)
        return extension

    def emit(self, name: str, data: Any, **options: Any) -> Any:
        """Emit one occurrence of an event type declared on the events extension
        (`rondo.events.Events`, experimental): `await server.emit("order.shipped", {...})`."""
        call = self.server_calls.get("emit")  # the events extension's, if installed
        if call is None:
            raise RuntimeError("server.emit needs the events extension: "
                               "server.extension(rondo.events.Events())")
        return call(name, data, **options)

    def settle(self) -> None:
        """Install the default extension (`server/defaults.py`) of every tool option a tool uses
        and no installed extension serves. Serving does this when it starts, so `server.extension(...)`
        may come after the tools; the fleet does it before asking extensions about workers."""
        from .defaults import defaults_for

        for extension in defaults_for(self):
            self.extension(extension)

    def on_change(self, listener: Callable[[str, Any], None]) -> None:
        """Follow this registry: `listener(what, detail)` after each change, with `what` one of
        "method" (detail: the new `Method` row), "wrap" (detail: an extension's `Wrap`),
        "unmethod" / "unwrap" (a removed extension's row or wrap), "extension" / "unextension"
        (an extension installed or removed: detail the extension; a follower that raises on
        "extension" refuses it, and it is uninstalled again), "tools", "prompts", "resources" (the list
        changed; detail None) or "resource" (detail: the URI whose content changed)."""
        self._listeners.append(listener)

    def _tell(self, what: str, detail: Any) -> None:
        for listener in self._listeners:
            listener(what, detail)

    def _add_method(self, method: Method) -> None:
        if any(m.name == method.name for m in self.extra_methods):
            raise ValueError(f"method {method.name!r} is added twice")
        if method.scopes:
            from ..auth.scopes import check_scopes

            self.method_scopes[method.name] = check_scopes(method.scopes, f"method {method.name!r}")
        self.extra_methods.append(method)
        self._tell("method", method)

    def remove_tool(self, name: str) -> None:
        del self.tools[name]
        self.component_scopes.pop(("tool", name), None)
        self._changed("tools")

    def remove_prompt(self, name: str) -> None:
        del self.prompts[name]
        self.component_scopes.pop(("prompt", name), None)
        self._changed("prompts")

    def remove_resource(self, uri: str) -> None:
        if uri in self.resources:
            del self.resources[uri]
        else:
            del self.templates[uri]
        self.component_scopes.pop(("resource", uri), None)
        self._changed("resources")

    # -- change notifications -------------------------------------------------------------------

    def _changed(self, what: str) -> None:
        self._tell(what, None)

    def notify_tools_changed(self) -> None:
        """Tell every listening client that the tool list changed."""
        self._changed("tools")

    def notify_prompts_changed(self) -> None:
        self._changed("prompts")

    def notify_resources_changed(self) -> None:
        self._changed("resources")

    def notify_resource_updated(self, uri: str) -> None:
        """Tell clients subscribed to `uri` (or a parent of it) that its content changed."""
        self._tell("resource", uri)

    @property
    def state_policy(self) -> StatePolicy | None:
        """The request-state boundary (None: off); see `state=` above."""
        policy = self._state_policy
        if policy is _DEFAULT:
            from ..state import StatePolicy

            policy = self._state_policy = StatePolicy()
        return policy

    @state_policy.setter
    def state_policy(self, policy: StatePolicy | None) -> None:
        self._state_policy = policy

    # -- serving -----------------------------------------------------------------------------

    @property
    def serving(self) -> bool:
        """Has its kernel been made (it serves, or has served)? A tool option's extension is
        then installed as soon as a tool using it arrives (`settle()`)."""
        return self._core is not None

    @property
    def core(self) -> Core:
        """The transport-free core that answers messages for this server."""
        if self._core is None:
            from ..core.core import Core

            self.settle()
            self._core = Core(self)
        return self._core

    def advertise(self, *lists: str) -> None:
        """Advertise these lists ("tools", "prompts", "resources") even while empty, with
        `listChanged`: for a server whose components come later (a gateway whose upstreams are
        still down), so a client that initializes now lists them and hears them arrive."""
        unknown = sorted(set(lists) - {"tools", "prompts", "resources"})
        if unknown:
            raise ValueError(f"advertise() takes 'tools', 'prompts', 'resources', got {unknown[0]!r}")
        self.advertised = self.advertised | frozenset(lists)

    def serves(self, capability: str) -> bool:
        """Is this top-level server capability advertised? What gates a method, answered
        without building the whole capabilities object on every request."""
        if capability == "tools":
            return bool(self.tools) or "tools" in self.advertised
        if capability == "prompts":
            return bool(self.prompts) or "prompts" in self.advertised
        if capability == "resources":
            return bool(self.resources or self.templates) or "resources" in self.advertised
        if capability == "completions":
            return self.completion_handler is not None
        return capability in self.capabilities()

    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {"logging": {}}
        always = self.advertised
        if self.tools or "tools" in always:
            caps["tools"] = {"listChanged": True}
        if self.prompts or "prompts" in always:
            caps["prompts"] = {"listChanged": True}
        if self.resources or self.templates or "resources" in always:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if self.completion_handler is not None:
            caps["completions"] = {}
        if self.extensions:
            advertised = {}
            for ext_name, ext in self.extensions.items():
                cap = ext.capability(self)
                if cap is not None:
                    advertised[ext_name] = dict(cap)
            if advertised:
                caps["extensions"] = advertised
        return caps

    def asgi(self, **options: Any) -> Any:
        """A plain ASGI application serving Streamable HTTP (mount it anywhere)."""
        from ..transport.http import HttpApp

        return HttpApp(self, **options)

    def run_stdio(self, **options: Any) -> None:
        """Serve newline-delimited JSON-RPC on stdin/stdout until stdin closes (options:
        `max_message`, `max_in_flight`; docs/limits.md)."""
        from ..transport.stdio import run

        run(self, **options)

    def run_http(self, host: str = "127.0.0.1", port: int = 8000, **options: Any) -> None:
        """Serve Streamable HTTP at http://host:port/mcp with uvicorn."""
        from ..transport.http import serve

        serve(self, host=host, port=port, **options)

    def run(self, transport: str = "stdio", **options: Any) -> None:
        if transport == "stdio":
            self.run_stdio()
        elif transport == "http":
            self.run_http(**options)
        else:
            raise ValueError(f"unknown transport {transport!r} (use 'stdio' or 'http')")

    def __repr__(self) -> str:
        return f"<rondo.Server {self.name!r}>"


def _always_suspends(core: Any, params: Any) -> bool:
    return True


def _unannotated(fn: Callable[..., Any], context_param: str | None) -> bool:
    """A cheap first look: does any named parameter lack a type hint?"""
    code = getattr(fn, "__code__", None)
    if code is None:
        return True  # not a plain function: let the full check decide
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    hints = getattr(fn, "__annotations__", {})
    return any(name not in hints and name != context_param for name in names)


def check_tracing(tracing: Any) -> Any:
    """None/False: off, nothing imported. True or a TracerProvider: on, and opentelemetry-api
    must be importable now (misconfiguration fails at start-up)."""
    if tracing is None or tracing is False:
        return None
    require_otel()
    return tracing


def require_otel() -> None:
    """Is the OpenTelemetry API importable? (tracing's one dependency, checked at start-up)"""
    try:
        import opentelemetry.trace  # noqa: F401
    except ImportError:
        raise ImportError(
            "tracing needs the OpenTelemetry API: pip install 'rondo-mcp[otel]'"
        ) from None
