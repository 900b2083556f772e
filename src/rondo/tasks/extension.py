"""`Tasks`: the `io.modelcontextprotocol/tasks` extension as method-table rows.

It adds `tasks/get`, `tasks/update` and `tasks/cancel`, and wraps two built-in rows:
`tools/call` (a task-opted tool may answer `resultType: "task"`, or -32021 to a client that
cannot take one) and `subscriptions/listen` (a `taskIds` filter streams `notifications/tasks`).
Install it with `server.extension(Tasks(store=...))`; a server with a task-opted tool and no
`Tasks` gets one with an in-memory store.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..server.method import Handler, Method, Wrap
from ..server.request import Request
from ..wire.era import MODERN
from ..wire.errors import McpError, invalid_params, missing_capability
from .keeper import Leases
from .record import (
    CANCELLED,
    EXTENSION,
    FAILED,
    INPUT_REQUIRED,
    WORKING,
    TaskRecord,
    detailed_wire,
    principal_digest,
)
from .runtime import Launch
from .stopping import Writes
from .store import MemoryTaskStore, TaskStore

if TYPE_CHECKING:
    from ..core.core import Core
    from ..server.server import Server

log = logging.getLogger("rondo.tasks")

PrincipalFn = Callable[[Any], "str | None"]
_MODERN = frozenset({MODERN})
NOT_FOUND = "Failed to retrieve task: Task not found"
LOST = "The worker running this task stopped (its lease expired)"


def declares_tasks(capabilities: Mapping[str, Any] | None) -> bool:
    extensions = (capabilities or {}).get("extensions")
    return isinstance(extensions, Mapping) and isinstance(extensions.get(EXTENSION), Mapping)


def _needs_tasks() -> McpError:
    return missing_capability({"extensions": {EXTENSION: {}}})


class Tasks:
    """The tasks extension for one server.

    - `store`: a `TaskStore` (default `MemoryTaskStore()`; `RedisTaskStore` for a fleet).
    - `ttl_ms`: how long a task is kept from its creation (None: until the store drops it);
      `poll_interval_ms`: the polling pace suggested to clients.
    - `lease`: seconds a worker's claim on a running task lasts without renewal (renewed every
      third of it: the worker's one heartbeat on a store that keeps them, every running task of
      the loop at once otherwise); when it lapses, the task is failed on the next look by any
      replica.
    - `watch_interval`: how often a `notifications/tasks` stream re-reads its tasks when no
      write woke it, and how often a keeper polls on a store without `on_change`.
    - `principal(ctx)`: who a request is; default the server's `StatePolicy.principal_of`
      (the verified token's principal when `rondo.auth` authenticated the request, else
      anonymous). Every task is bound to its creator's principal.
    - `stop_timeout`: when the server stops (the end of its lifespan), the tasks it still runs
      are failed ("The worker running this task stopped") and the extension awaits their last
      writes, and any other store write it started, for at most this many seconds; what is
      left then is cancelled (`stopping.py`).
    """

    name = EXTENSION
    tool_options = ("task",)  # `@server.tool(task=...)`: `Server.settle()` sees it is served

    def __init__(
        self,
        store: TaskStore | None = None,
        *,
        ttl_ms: int | None = 3_600_000,
        poll_interval_ms: int = 500,
        lease: float = 30.0,
        watch_interval: float = 0.25,
        principal: PrincipalFn | None = None,
        stop_timeout: float = 5.0,
    ) -> None:
        if ttl_ms is not None and (not isinstance(ttl_ms, int) or isinstance(ttl_ms, bool) or ttl_ms <= 0):
            raise ValueError("ttl_ms must be a positive integer or None")
        if not isinstance(poll_interval_ms, int) or isinstance(poll_interval_ms, bool) or poll_interval_ms <= 0:
            raise ValueError("poll_interval_ms must be a positive integer")
        if not lease > 0 or not watch_interval > 0:
            raise ValueError("lease and watch_interval must be positive")
        if isinstance(stop_timeout, bool) or not isinstance(stop_timeout, int | float) or not stop_timeout > 0:
            raise ValueError("stop_timeout must be a positive number of seconds")
        store = MemoryTaskStore() if store is None else store
        for op in ("create", "get", "modify", "wait"):
            if not callable(getattr(store, op, None)):
                raise TypeError(f"store must be a TaskStore (it has no {op}())")
        self.store: TaskStore = store
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.lease = float(lease)
        self.watch_interval = float(watch_interval)
        self.stop_timeout = float(stop_timeout)
        self._principal = principal
        self.worker_id = secrets.token_hex(8)
        self.running: set[Launch] = set()  # tasks this process is running
        self._leases: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Leases] = (
            weakref.WeakKeyDictionary())
        self._writes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Writes] = (
            weakref.WeakKeyDictionary())
        self._attached: weakref.WeakSet[Server] = weakref.WeakSet()
        self._made_store: TaskStore | None = None  # made by `use_redis`: closed at stop
        self.server: Server | None = None

    # -- the Extension protocol --------------------------------------------------------------

    def attach(self, server: Server) -> None:
        """Installed: the server's lifespan ends with `stop()` (one hook per server)."""
        if server not in self._attached:
            self._attached.add(server)
            server.lifespan(self._lifespan)

    async def _lifespan(self, server: Any) -> AsyncIterator[None]:
        try:
            yield None
        finally:
            await self.stop()

    async def stop(self) -> None:
        """The server stops: end the tasks this event loop runs and await every store write
        the extension started on it, within `stop_timeout` (the lifespan calls it)."""
        from .stopping import stop

        await stop(self)

    def capability(self, server: Server) -> Mapping[str, Any] | None:
        # Advertised only when some tool can answer with a task.
        return {} if any(tool.task for tool in server.tools.values()) else None

    def methods(self) -> Iterable[Method]:
        return [
            Method("tasks/get", self._get, _MODERN, suspends=_always, name_field="taskId"),
            Method("tasks/update", self._update, _MODERN, suspends=_always, name_field="taskId"),
            Method("tasks/cancel", self._cancel, _MODERN, suspends=_always, name_field="taskId"),
        ]

    def wraps(self) -> Iterable[Wrap]:
        """Around two built-in rows: `tools/call` for task-opted tools only (every other tool
        keeps the express and typed lanes), `subscriptions/listen` for a `taskIds` filter."""
        return [
            Wrap("tools/call", self._tools_call, tools=_task_opted, suspends=_task_suspends),
            Wrap("subscriptions/listen", self._listen),
        ]

    def context_calls(self) -> dict[str, Callable[..., Any]]:
        """`ctx.start_task()` (the `Context` method this extension serves)."""
        from .runtime import start_task

        return {"start_task": start_task}

    def fleet_problem(self, server: Server) -> str | None:
        """Why tasks cannot run on many workers: a task-opted tool keeps them in this process."""
        if not any(tool.task for tool in server.tools.values()):
            return None
        if not isinstance(self.store, MemoryTaskStore):
            return None
        return ("its tasks are kept in process memory (the default MemoryTaskStore), so a task "
                "created on one worker is not found on another. Use rondo run --redis URL, or "
                "server.extension(Tasks(store=RedisTaskStore(url=...))).")

    def use_redis(self, url: str) -> None:
        """`rondo run --redis URL`: an in-memory store becomes a Redis store."""
        if isinstance(self.store, MemoryTaskStore):
            from .redis_store import RedisTaskStore

            self.store = self._made_store = RedisTaskStore(url=url)

    async def tool_of(self, core: Core, req: Request, task_id: Any) -> str | None:
        """The tool whose call made task `task_id` (None: unknown, or made before records
        named it); whose task it is is checked by the row, not here."""
        if not isinstance(task_id, str) or not task_id:
            return None
        record = await self.store.get(task_id)
        return None if record is None else record.tool

    # -- who is asking ------------------------------------------------------------------------

    def principal_of(self, core: Core, req: Request) -> str | None:
        from ..state.policy import anonymous

        ctx = core.modern.context(core, req)
        if self._principal is not None:
            return self._principal(ctx)
        policy = core.server.state_policy
        # The same caller request state is bound to: the verified token's (rondo.auth) by default.
        return anonymous(ctx) if policy is None else policy.principal_of(ctx)

    async def _find(self, core: Core, req: Request) -> TaskRecord:
        """The caller's own task named by `params.taskId`; anything else is -32602, alike."""
        if not declares_tasks(req.env.capabilities):
            raise _needs_tasks()
        task_id = req.params.get("taskId")
        if not isinstance(task_id, str) or not task_id:
            raise invalid_params("taskId must be a non-empty string")
        record = await self.store.get(task_id)
        if record is None or record.principal != principal_digest(self.principal_of(core, req)):
            raise invalid_params(NOT_FOUND)  # another principal's task looks exactly unknown
        tracer = core.tracer
        if tracer is not None and tracer.on:
            tracer.task_poll(record.id, record.trace)
        return record

    # -- methods -------------------------------------------------------------------------------

    async def _tools_call(self, core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
        tool = core.server.tools.get(req.params.get("name"))  # type: ignore[arg-type]
        mode = None if tool is None else tool.task
        if mode is None or req.dialect.era != MODERN:
            return await call_next(core, req)  # legacy sessions run task tools synchronously
        if not declares_tasks(req.env.capabilities):
            if mode == "required":
                raise _needs_tasks()
            return await call_next(core, req)
        launch = Launch(self, core, req, self.principal_of(core, req))
        return await launch.answer(lambda: call_next(core, req))

    async def _get(self, core: Core, req: Request) -> dict[str, Any]:
        record = await self._find(core, req)
        if not record.terminal and record.lease is not None and record.lease < time.time():
            heartbeat = getattr(self.store, "heartbeat", None)
            alive = None if heartbeat is None or record.worker is None else await heartbeat(record.worker)
            if alive is None or alive < time.time():  # its worker's heartbeat stopped too
                record = await self._lost(record.id, alive) or record
        return detailed_wire(record)

    async def _update(self, core: Core, req: Request) -> dict[str, Any]:
        record = await self._find(core, req)
        responses = req.params.get("inputResponses")
        if not isinstance(responses, Mapping):
            raise invalid_params("inputResponses must be an object")
        _check_answers(record, responses)

        def deliver(rec: TaskRecord) -> bool:
            # Only keys still outstanding count: unknown, answered or superseded ones are ignored.
            taken = [key for key in responses if key in rec.requests and key not in rec.answers]
            if not taken or rec.terminal:
                return False
            for key in taken:
                rec.answers[key] = responses[key]
                del rec.requests[key]
            if not rec.requests:
                rec.status = WORKING
            rec.updated = time.time()
            return True

        await self.store.modify(record.id, deliver)
        return {}

    async def _cancel(self, core: Core, req: Request) -> dict[str, Any]:
        record = await self._find(core, req)

        def mark(rec: TaskRecord) -> bool:
            if rec.terminal or rec.cancel:
                return False  # a finished task acks idempotently
            rec.cancel = True
            rec.updated = time.time()
            return True

        await self.store.modify(record.id, mark)
        return {}

    async def _listen(self, core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
        from .listen import listen

        return await listen(self, core, req, call_next)

    # -- writes the runtime makes ----------------------------------------------------------

    async def renew(self, task_id: str, until: float | None = None) -> bool:
        """Move one task's lease on (to `until`, default a full lease from now); False when
        the task is gone or finished."""
        lease = time.time() + self.lease if until is None else until

        def extend(rec: TaskRecord) -> bool:
            if rec.terminal:
                return False
            rec.lease = lease
            return True

        record = await self.store.modify(task_id, extend)
        return record is not None and not record.terminal

    def leases(self, loop: asyncio.AbstractEventLoop) -> Leases:
        """The lease renewer of the tasks `loop` runs (made on first use)."""
        leases = self._leases.get(loop)
        if leases is None:
            leases = self._leases[loop] = Leases(self, loop)
        return leases

    def write(self, coro: Coroutine[Any, Any, Any], failure: str, task_id: str) -> asyncio.Task[Any]:
        """Run a store write that must outlive the cancellation asking for it as a task the
        server's stop awaits; its failure is logged as `failure` (`stopping.Writes`)."""
        return self.writes(asyncio.get_running_loop()).start(coro, failure, task_id)

    def writes(self, loop: asyncio.AbstractEventLoop) -> Writes:
        """The background store writes of `loop` (made on first use)."""
        writes = self._writes.get(loop)
        if writes is None:
            writes = self._writes[loop] = Writes()
        return writes

    async def set_message(self, task_id: str, message: str) -> None:
        def put(rec: TaskRecord) -> bool:
            if rec.terminal or rec.message == message:
                return False
            rec.message = message
            rec.updated = time.time()
            return True

        await self.store.modify(task_id, put)

    async def _lost(self, task_id: str, alive: float | None = None) -> TaskRecord | None:
        def fail(rec: TaskRecord) -> bool:
            if rec.terminal or rec.lease is None or max(rec.lease, alive or 0.0) >= time.time():
                return False
            rec.status = FAILED
            rec.error = {"code": -32603, "message": LOST}
            rec.message = LOST
            rec.requests = {}
            rec.updated = time.time()
            return True

        return await self.store.modify(task_id, fail)


def _check_answers(record: TaskRecord, responses: Mapping[str, Any]) -> None:
    """An answer to an outstanding question must fit it (-32602 names the key); answers to
    anything else are ignored, not judged."""
    from ..kinds import kind_for

    for key, raw in responses.items():
        request = record.requests.get(key)
        if request is None:
            continue
        if not isinstance(raw, Mapping):
            raise invalid_params(f"Invalid input response for '{key}': expected an object")
        try:
            kind_for(request).read_answer(request, raw)
        except ValueError as exc:
            raise invalid_params(f"Invalid input response for '{key}': {exc}") from None


def _task_opted(tool: Any) -> bool:
    return tool.task is not None


def _task_suspends(core: Core, params: Mapping[str, Any]) -> bool:
    name = params.get("name")
    tool = core.server.tools.get(name) if isinstance(name, str) else None
    return tool is not None and tool.task is not None


def _always(core: Core, params: Mapping[str, Any]) -> bool:
    return True


__all__ = ["CANCELLED", "EXTENSION", "INPUT_REQUIRED", "Tasks", "declares_tasks"]
