"""The per-request Context a handler may ask for with a `ctx: rondo.Context` parameter."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..wire.meta import LOG_LEVEL_RANK, PROGRESS_TOKEN

if TYPE_CHECKING:
    import asyncio

    from .server import Server

Emit = Callable[[dict[str, Any]], None]


class _Done:
    """An awaitable that is already finished: lets `ctx.log(...)` be called or awaited."""

    __slots__ = ()

    def __await__(self) -> Iterator[None]:
        return iter(())


DONE = _Done()


_new = object.__new__


class Context:
    """What the framework knows about the request being handled.

    The fields are framework-owned: a component's own arguments never gain hidden keys, and
    middleware must not rewrite these when it forwards the context.
    """

    __slots__ = (
        "server",
        "request_id",
        "request_method",
        "request_params",
        "protocol_version",
        "client_info",
        "client_capabilities",
        "era",
        "input_responses",
        "state",
        "auth",
        "log_level",
        "extras",
        "_emit",
        "_progress",
        "_session",
        "_mrtr",
        "_sync",
        "_loop",
        "_dialect",
        "_flow",
        "peer",  # the HTTP client's (host, port) when the transport knows it; else unset
    )

    peer: Any  # set only when the transport knows the client's address (HTTP)

    def __init__(
        self,
        server: Server,
        *,
        request_id: Any = None,
        request_method: str = "",
        request_params: Mapping[str, Any] | None = None,
        protocol_version: str = "",
        client_info: dict[str, Any] | None = None,
        client_capabilities: dict[str, Any] | None = None,
        era: str = "modern",
        auth: Any = None,
        log_level: str | None = None,
        emit: Emit | None = None,
        session: Any = None,
        dialect: Any = None,
    ) -> None:
        self._fill(server, request_id, request_method, request_params, protocol_version,
                   client_info, client_capabilities, era, auth, log_level, emit, session, dialect)

    def _fill(
        self, server: Server, request_id: Any, request_method: str,
        request_params: Mapping[str, Any] | None, protocol_version: str,
        client_info: dict[str, Any] | None, client_capabilities: dict[str, Any] | None, era: str,
        auth: Any, log_level: str | None, emit: Emit | None, session: Any, dialect: Any,
    ) -> Context:
        # Every field is set here, whichever way the context is made (`__init__`, `for_call`).
        self.server = server
        self.request_id = request_id
        self.request_method = request_method
        self.request_params: Mapping[str, Any] = request_params or {}
        self.protocol_version = protocol_version
        self.client_info = client_info
        self.client_capabilities: dict[str, Any] = client_capabilities or {}
        self.era = era
        self.input_responses: dict[str, Any] = {}
        self.state: Any = None
        self.auth = auth
        self.log_level = log_level
        # What middleware put in its request's `extras` (timing, an audit id, a tenant).
        self.extras: dict[str, Any] = {}
        self._emit = emit
        meta = self.request_params.get("_meta") if request_params else None
        self._progress = meta.get(PROGRESS_TOKEN) if isinstance(meta, dict) else None
        self._session = session
        self._mrtr: Any = None
        self._sync = False
        self._loop: asyncio.AbstractEventLoop | None = None
        # Where `ctx.ask` goes: the era's dialect (MRTR interrupt or legacy back-channel).
        self._dialect = dialect
        # The MRTR flow this round belongs to (tracing only): carried in the sealed state.
        self._flow: Any = None
        return self

    @classmethod
    def for_request(cls, server: Server, req: Any, dialect: Any) -> Context:
        """The context of one core `Request` (either era: its envelope says what the client
        declared, per request on 2026-07-28 or at `initialize` on a legacy session)."""
        ctx = cls.for_call(server, req.id, req.method, req.params, req.env, dialect,
                           auth=req.auth, emit=req.emit, session=req.call)
        if req.extras is not None:
            ctx.extras = req.extras
        if req.peer is not None:
            ctx.peer = req.peer
        return ctx

    @classmethod
    def for_call(
        cls, server: Server, rid: Any, method: str, params: Mapping[str, Any], env: Any,
        dialect: Any, *, auth: Any = None, emit: Emit | None = None, session: Any = None,
    ) -> Context:
        """The context of one request given by its parts (the express lane has no `Request`).
        Made without `cls(...)`: a class call with keywords costs more than filling the fields."""
        return _new(cls)._fill(server, rid, method, params, env.version, env.client_info,
                               env.capabilities, dialect.era, auth, env.log_level, emit, session,
                               dialect)

    @property
    def server_name(self) -> str:
        """The server's name: the audience request-state tokens are bound to."""
        return self.server.name

    @property
    def progress_token(self) -> Any:
        """The client's `progressToken` for this request, or None if it asked for no progress."""
        return self._progress

    # -- notifications scoped to this request -------------------------------------------------

    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> _Done:
        """Send `notifications/progress` if the client asked for progress; call it or await it."""
        if self._progress is not None and self._emit is not None:
            params: dict[str, Any] = {"progressToken": self._progress, "progress": progress}
            if total is not None:
                params["total"] = total
            if message is not None:
                params["message"] = message
            self._emit({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
        return DONE

    def log(self, level: str, data: Any, logger: str | None = None) -> _Done:
        """Send `notifications/message` at `level`, only if this request opted in to that level."""
        wanted = self.log_level
        if wanted is None or self._emit is None:
            return DONE
        rank = LOG_LEVEL_RANK.get(level)
        if rank is None:
            raise ValueError(f"unknown log level {level!r}")
        if rank >= LOG_LEVEL_RANK[wanted]:
            params: dict[str, Any] = {"level": level, "data": data}
            if logger is not None:
                params["logger"] = logger
            self._emit({"jsonrpc": "2.0", "method": "notifications/message", "params": params})
        return DONE

    def debug(self, data: Any) -> _Done:
        return self.log("debug", data)

    def info(self, data: Any) -> _Done:
        return self.log("info", data)

    def warning(self, data: Any) -> _Done:
        return self.log("warning", data)

    def error(self, data: Any) -> _Done:
        return self.log("error", data)

    # -- asking the client for input (MRTR on 2026-07-28, back-channel on legacy) ------------

    def ask(
        self,
        key: str,
        request: Mapping[str, Any],
        *,
        fallback: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
        on_unsupported: str | Callable[[dict[str, Any]], str] | None = None,
    ) -> Any:
        """Return the answer to `request`, asking the client for it if no round has supplied it.

        In an `async def` handler write `await ctx.ask(...)`; in a plain `def` handler call it
        directly. On the 2026-07-28 wire a missing answer ends this round with input_required;
        the handler then runs again from the top on the retry.

        `fallback` (a request, or several in order of preference) is asked instead when the
        client did not declare what `request` needs (a form when it lacks URL elicitation).
        `on_unsupported` (a message, or a function of the missing capabilities returning one)
        turns "this client cannot answer any of them" into a tool error the model can act on;
        without it that is -32021 naming the missing capabilities, as for any question.
        """
        if fallback is not None or on_unsupported is not None:
            from ..mrtr.ask import pick_supported

            chosen, missing = pick_supported(self, request, fallback)
            if chosen is None and on_unsupported is not None:
                from .content import ToolError

                text = on_unsupported if isinstance(on_unsupported, str) else on_unsupported(missing)
                raise ToolError(text)
            if chosen is not None:
                request = chosen
        # `_ask` without its frame: one non-empty dict needs none of its checks.
        dialect = self._dialect
        if dialect is None:  # a context made by hand: the server's 2026-07-28 dialect
            dialect = self.server.core.modern
        return dialect.ask(self, {key: request}, key)

    def url_complete(self, key: str) -> _Done:
        """Tell a 2025-11-25 client that the URL elicitation asked as `key` has finished
        (`notifications/elicitation/complete`). The 2026-07-28 wire has no such notification
        (the retry carries the state instead): there, and without a session, a no-op."""
        complete = getattr(self._session, "url_complete", None)  # a legacy session's call
        if complete is not None:
            complete(self, key)
        return DONE

    def ask_all(self, requests: Mapping[str, Mapping[str, Any]]) -> Any:
        """Ask several independent questions at once; returns `{key: answer}`."""
        return self._ask(requests, None)

    def _ask(self, requests: Mapping[str, Mapping[str, Any]], single: str | None) -> Any:
        if not requests or (type(requests) is not dict and not isinstance(requests, Mapping)):
            raise ValueError("ask needs at least one input request")
        dialect = self._dialect
        if dialect is None:  # a context made by hand: the server's 2026-07-28 dialect
            dialect = self.server.core.modern
        return dialect.ask(self, requests, single)

    @property
    def lifespan(self) -> Mapping[str, Any]:
        """What the server's `@server.lifespan` hooks yielded (a DB pool, a client...)."""
        return self.server._lifespan.state

    @property
    def user_state(self) -> Any:
        """The caller's per-user state (`rondo.userstate.UserStateView`): needs
        `server.extension(rondo.userstate.UserState(...))`; raises `NoPrincipal` for an
        anonymous caller unless that extension shares state among anonymous callers."""
        call = self.server.context_calls.get("user_state")  # the userstate extension's, if installed
        if call is None:
            raise RuntimeError("ctx.user_state needs per-user state installed: "
                               "server.extension(rondo.userstate.UserState(...))")
        return call(self)

    # -- served by the tasks extension -------------------------------------------------------------------

    def start_task(self, message: str | None = None) -> Any:
        """In a tool registered with `task=...`: answer the call with a task now and run the
        rest of the handler as that task (await it in an `async def`). Questions asked before
        it are MRTR rounds of the call; `ctx.ask` after it parks the task at input_required.
        Where no task can be made (the client did not declare the extension, a 2025-11-25
        session) it does nothing and the handler simply goes on. `message` is the first
        `statusMessage`."""
        call = self.server.context_calls.get("start_task")  # the tasks extension's, if installed
        if call is None:
            return None if self._sync else DONE
        return call(self, message)

    @property
    def task_id(self) -> str | None:
        """The id of the task this handler runs as, or None before `start_task()` / outside one."""
        return getattr(self._dialect, "task_id", None)

    @property
    def cancelled(self) -> bool:
        """True once `tasks/cancel` reached this handler's task (a thread polls this; a
        coroutine is cancelled instead)."""
        launch = getattr(self._dialect, "launch", None)
        return launch is not None and launch.cancelled.is_set()

    # -- for the framework: how the handler runs, where its questions and notes go --------------
    # What the kernel, the dialects and extensions change on a context, through methods of its
    # own module (tests/project/test_layers.py refuses a write to its private slots from anywhere else).

    def runs_inline(self, loop: asyncio.AbstractEventLoop | None = None,
                    emit: Emit | None = None) -> None:
        """The handler is a plain `def`: `ctx.ask` returns (or blocks) instead of being awaited.
        With `loop` it runs in a worker thread of that loop; `emit` then replaces the
        notification sink (one that hops back to the loop)."""
        self._sync = True
        if loop is not None:
            self._loop = loop
        if emit is not None:
            self._emit = emit

    def redirect(self, dialect: Any, emit: Emit, progress: Any = None) -> None:
        """An extension takes the rest of this handler over (a task): its questions go to
        `dialect`, its notifications to `emit`, and `progress` is the token when the client
        gave none."""
        self._dialect = dialect
        self._emit = emit
        if self._progress is None:
            self._progress = progress

    def continue_flow(self, flow: Any) -> None:
        """The MRTR flow this round belongs to (tracing only), carried in the sealed state."""
        self._flow = flow

    def keep_book(self, book: Any) -> Any:
        """Where `ctx.ask` keeps what was asked and answered this round (`rondo.mrtr.ask`)."""
        self._mrtr = book
        return book

    def __repr__(self) -> str:
        return f"<Context {self.request_method} id={self.request_id!r} era={self.era}>"
