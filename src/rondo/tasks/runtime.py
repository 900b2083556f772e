"""Running tasks: the switch from MRTR to a task (`ctx.start_task()`), the task's `ctx.ask`
(parks it at input_required until `tasks/update` answers), cancellation, and the worker's lease.

A task-augmentable `tools/call` runs the tool in a runner of its own. Until the handler calls
`ctx.start_task()` that runner is the call itself: `ctx.ask` is an MRTR round, a return is
the ordinary result. At `start_task()` the record is written (durably, before anybody learns
its id), the call is answered `resultType: "task"`, and the rest of the handler goes on in the
runner, which writes its outcome to the store. While it runs, a keeper (`keeper.py`) hands
answers from `tasks/update` to the waiting `ctx.ask` and turns a `tasks/cancel` into a
cancellation the handler sees; the loop's `Leases` renew its lease with every other task's.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import secrets
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..wire.errors import McpError, internal_error
from .keeper import Keeper
from .record import (
    CANCELLED,
    COMPLETED,
    FAILED,
    INPUT_REQUIRED,
    TaskRecord,
    client_digest,
    principal_digest,
    task_wire,
)
from .stopping import short, written

if TYPE_CHECKING:
    from ..core.core import Core
    from ..server.context import Context
    from ..server.request import Request
    from .extension import Tasks

log = logging.getLogger("rondo.tasks")

# What a task still running when its server stops ends with (`Launch.halt`).
STOPPED = "The worker running this task stopped (its server shut down)"

# The launch of the tools/call being run, if it may become a task (set around its runner).
LAUNCH: contextvars.ContextVar[Launch | None] = contextvars.ContextVar("rondo_task_launch", default=None)


class TaskCancelled(Exception):
    """Raised by `ctx.ask` (and available to poll via `ctx.cancelled`) in a task's worker
    thread once the task was cancelled: a thread cannot be interrupted, so it is told."""


def new_task_id() -> str:
    return secrets.token_urlsafe(24)  # 192 random bits: a bearer capability, not a counter


class Launch:
    """One task-augmentable tools/call: its runner, and the task once `start_task` made it."""

    def __init__(self, tasks: Tasks, core: Core, req: Request, principal: str | None) -> None:
        self.tasks = tasks
        self.core = core
        self.req = req
        self.principal = principal
        loop = asyncio.get_running_loop()
        self.loop = loop
        self.started: asyncio.Future[TaskRecord] = loop.create_future()
        self.record: TaskRecord | None = None
        self.runner: asyncio.Task[Any] | None = None
        self.keeper: Keeper | None = None
        self.cancelled = threading.Event()
        self.stopped = False  # halted by the server's stop (`stopping.py`)
        # The recording tools/call span, kept until the task exists (tracing only).
        tracer = core.tracer
        self.span: Any = tracer.recording() if tracer is not None and tracer.on else None

    async def answer(self, call: Any) -> dict[str, Any]:
        """Run the call; answer with its result if it ends before starting a task, else with
        the `CreateTaskResult` as soon as the task exists."""
        token = LAUNCH.set(self)
        try:
            runner = self.runner = asyncio.ensure_future(self._run(call))
        finally:
            LAUNCH.reset(token)
        try:
            await asyncio.wait({runner, self.started}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            if not self.started.done():
                runner.cancel()  # the client left before any task existed
            raise
        if self.started.done():
            return {"resultType": "task", **task_wire(self.started.result())}
        result: dict[str, Any] = runner.result()
        return result

    def halt(self) -> None:
        """The server stops under the running task: it ends failed (`STOPPED`), unless it was
        cancelled already; a worker thread's next `ctx.ask` raises `TaskCancelled`."""
        if not self.cancelled.is_set():
            self.stopped = True
            self.cancelled.set()
        if self.runner is not None and not self.runner.done():
            self.runner.cancel()

    async def _run(self, call: Any) -> Any:
        try:
            result = await call()
        except asyncio.CancelledError:
            if self.record is None:
                raise
            await self._settle(CANCELLED, message="Cancelled")
            return None
        except McpError as exc:
            if self.record is None:
                raise
            await self._settle(FAILED, error=exc.to_error(), message=exc.message)
            return None
        except GeneratorExit:
            raise  # closed without its event loop (collected): nothing can be written now
        except BaseException as exc:
            if self.record is None:
                raise
            log.exception("task %s failed", short(self.record.id))
            await self._settle(FAILED, error=internal_error().to_error(), message=f"Internal error: {type(exc).__name__}")
            return None
        if self.record is None:
            return result
        if result.get("resultType") == "input_required":
            error = internal_error("a running task cannot return input_required; use ctx.ask")
            await self._settle(FAILED, error=error.to_error(), message=error.message)
        else:
            # The inlined result is the call's own result type: a 2026-07-28 CallToolResult,
            # `resultType` included (the shape clients validate it against).
            await self._settle(COMPLETED, result={**result, "resultType": "complete"})
        return None

    async def _settle(self, status: str, *, result: dict[str, Any] | None = None,
                      error: dict[str, Any] | None = None, message: str | None = None) -> None:
        assert self.record is not None
        self.tasks.running.discard(self)
        if self.keeper is not None:
            self.keeper.stop()
        if self.stopped:  # the server stopped under it (a result that made it in still counts)
            if status != COMPLETED:
                status, result, message = FAILED, None, STOPPED
                error = {"code": -32603, "message": STOPPED}
        elif self.cancelled.is_set() and status != CANCELLED:
            status, result, error, message = CANCELLED, None, None, "Cancelled"

        def finish(rec: TaskRecord) -> bool:
            if rec.terminal:
                return False
            rec.status = status
            rec.result = result
            rec.error = error
            rec.requests = {}
            rec.lease = None
            if message is not None:
                rec.message = message
            rec.updated = time.time()
            return True

        # Its own task, which the server's stop awaits: a second cancellation of the runner
        # does not cut the write short, nor lose its failure (logged there).
        end = self.tasks.write(self.tasks.store.modify(self.record.id, finish),
                               "rondo.tasks: could not record the end of task %s (%s)", self.record.id)
        await written(self.tasks, end)

    async def start(self, ctx: Context, message: str | None) -> TaskRecord:
        """Create the task (durably), answer the call with it, and switch `ctx` to task mode."""
        if self.record is not None:
            return self.record
        tasks = self.tasks
        now = time.time()
        record = TaskRecord(
            id=new_task_id(),
            principal=principal_digest(self.principal),
            created=now,
            updated=now,
            ttl_ms=tasks.ttl_ms,
            poll_ms=tasks.poll_interval_ms,
            message=message,
            lease=now + tasks.lease,
            worker=tasks.worker_id,
            client=client_digest(self.principal, self.req.peer),
            tool=tool if isinstance(tool := self.req.params.get("name"), str) else None,
        )
        span, self.span = self.span, None
        tracer = self.core.tracer
        if span is not None and tracer is not None:
            record.trace = tracer.task_origin(span, record.id, ctx._flow)
        await tasks.store.create(record)
        self.record = record
        tasks.running.add(self)  # the loop holds tasks weakly: keep the runner alive
        _route_progress(self, ctx, TaskDialect(self, ctx._dialect))
        self.keeper = Keeper(self)
        self.keeper.begin()
        self.started.set_result(record)
        return record


def start_task(ctx: Context, message: str | None = None) -> Any:
    """`ctx.start_task()`: the engine. Outside a task-augmentable call it does nothing."""
    from ..server.context import DONE

    launch = LAUNCH.get()
    if launch is None or launch.record is not None:
        return None if ctx._sync else DONE
    if not ctx._sync:
        return _started(launch.start(ctx, message))
    if threading.get_ident() == _loop_thread(launch):
        raise RuntimeError("a plain def task tool must run in a worker thread (rondo does this itself)")
    asyncio.run_coroutine_threadsafe(launch.start(ctx, message), launch.loop).result()
    return None


async def _started(coro: Any) -> None:
    await coro


def _loop_thread(launch: Launch) -> int | None:
    return getattr(launch.loop, "_thread_id", None)


def _route_progress(launch: Launch, ctx: Context, dialect: Any) -> None:
    """After the call is answered nobody reads its stream: progress messages become the
    task's `statusMessage`, other notifications of the call are dropped (the spec keeps
    progress and log messages off task streams)."""
    loop = launch.loop
    assert launch.record is not None
    task_id = launch.record.id

    def emit(note: dict[str, Any]) -> None:
        if note.get("method") != "notifications/progress":
            return
        message = (note.get("params") or {}).get("message")
        if isinstance(message, str):
            loop.call_soon_threadsafe(_progress, launch, task_id, message)

    ctx.redirect(dialect, emit, f"task-{task_id}")


def _progress(launch: Launch, task_id: str, message: str) -> None:
    """A progress message becomes the task's `statusMessage`, in a write the server's stop
    awaits (dropped while too many writes are in flight: the next message counts)."""
    tasks = launch.tasks
    if tasks.writes(launch.loop).full:
        return
    tasks.write(tasks.set_message(task_id, message),
                "rondo.tasks: could not record the progress of task %s (%s)", task_id)


class TaskDialect:
    """How `ctx.ask` behaves inside a running task: park at input_required, resume on answers."""

    era = "modern"

    def __init__(self, launch: Launch, before: Any) -> None:
        self.launch = launch
        self.before = before

    @property
    def task_id(self) -> str:
        assert self.launch.record is not None
        return self.launch.record.id

    def ask(self, ctx: Context, requests: Mapping[str, Mapping[str, Any]], single: str | None) -> Any:
        from ..kinds import missing_capabilities
        from ..mrtr.admission import check_requests
        from ..wire.errors import missing_capability

        check_requests(requests)
        missing = missing_capabilities(requests, ctx.client_capabilities)
        if missing:
            raise missing_capability(missing)
        coro = self._ask(requests, single)
        if not ctx._sync:
            from ..mrtr.ask import Awaitable, book_of

            # A forgotten `await` names the fix (and is refused when the handler returns).
            return Awaitable("ask" if single is not None else "ask_all", coro=coro, book=book_of(ctx))
        if self.launch.cancelled.is_set():
            coro.close()
            raise TaskCancelled("the task was cancelled")
        import concurrent.futures

        fut = asyncio.run_coroutine_threadsafe(coro, self.launch.loop)
        try:
            return fut.result()
        except (asyncio.CancelledError, concurrent.futures.CancelledError):
            raise TaskCancelled("the task was cancelled") from None

    async def _ask(self, requests: Mapping[str, Mapping[str, Any]], single: str | None) -> Any:
        from ..kinds import kind_for
        from ..wire.errors import invalid_params

        launch = self.launch
        keeper = launch.keeper
        assert launch.record is not None and keeper is not None
        wire_keys: dict[str, str] = {}

        def park(rec: TaskRecord) -> bool:
            if rec.terminal:
                return False
            for key, request in requests.items():
                wire_key = key
                n = 1
                while wire_key in rec.used:  # a key is never issued twice in a task's life
                    n += 1
                    wire_key = f"{key}.{n}"
                rec.used.append(wire_key)
                wire_keys[key] = wire_key
                rec.requests[wire_key] = dict(request)
            rec.status = INPUT_REQUIRED
            rec.updated = time.time()
            return True

        rec = await launch.tasks.store.modify(launch.record.id, park)
        if rec is None or not wire_keys:
            raise asyncio.CancelledError
        waiter = keeper.expect(set(wire_keys.values()))
        try:
            raw = await waiter
        except asyncio.CancelledError:
            # Nobody waits for the answers any more: withdraw the question, in a write of its
            # own the server's stop awaits, so cancelling this runner again does not leave it
            # pending; its failure is logged there, and the cancellation goes on.
            withdrawal = launch.tasks.write(keeper.withdraw(set(wire_keys.values())),
                                            "rondo.tasks: could not withdraw a question of task %s (%s)",
                                            launch.record.id)
            await written(launch.tasks, withdrawal)
            raise
        answers: dict[str, Any] = {}
        for key, wire_key in wire_keys.items():
            try:
                answers[key] = kind_for(requests[key]).read_answer(requests[key], raw[wire_key])
            except ValueError as exc:
                raise invalid_params(f"Invalid input response for '{wire_key}': {exc}") from None
        return answers[single] if single is not None else answers
