"""The tasks extension on the client: follow a task to its end, or hold a handle to it.

`TasksClient` is what `Client(tasks=True)` installs: it declares
`io.modelcontextprotocol/tasks`, and when a call is answered `resultType: "task"` it polls
`tasks/get` at the server's `pollIntervalMs`, answers the task's `inputRequests` with the
client's own handlers (the ones MRTR uses) through `tasks/update`, and returns the inlined
result. If the awaiting code is cancelled, the task is cancelled with `tasks/cancel`.

`TaskHandle` is for callers who drive it themselves: `get`, `update`, `cancel`, `wait`; build
one from a task id to resume a task another process started (`client.task(task_id)`).

Against a 2025-11-25 server, `legacy_call` speaks that revision's experimental tasks
(`params.task`, `tasks/get`, `tasks/result`, `tasks/cancel`) for tools that require them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any

from ..client.errors import ClientError, InputRequiredError, ProtocolError
from ..client.loop import Unanswerable
from ..wire.errors import McpError
from ..wire.meta import declare

if TYPE_CHECKING:
    from ..client import handle
    from ..client.session import Client, ResultHandler
    from ..client.types import CallToolResult

# The methods this half calls that name a task (their `Mcp-Name` is the task id).
for _method in ("tasks/get", "tasks/update", "tasks/cancel"):
    declare(_method, "taskId")

Json = dict[str, Any]
StatusCallback = Callable[[Json], Any]
EXTENSION = "io.modelcontextprotocol/tasks"
TERMINAL = frozenset({"completed", "failed", "cancelled"})
DEFAULT_POLL_MS = 500
MAX_POLL_MS = 30_000
CANCEL_TIMEOUT = 5.0


class TaskWasCancelled(ClientError):
    """The task ended `cancelled` (by us or by the server). `task` is its last state."""

    def __init__(self, task: Json) -> None:
        super().__init__(f"task {task.get('taskId')} was cancelled"
                         + (f": {task['statusMessage']}" if task.get("statusMessage") else ""))
        self.task = task


class TaskFailed(McpError):
    """The task ended `failed`: its JSON-RPC error, raised as an McpError (code, message, data)."""

    def __init__(self, task: Json) -> None:
        error = task.get("error") if isinstance(task.get("error"), dict) else {}
        assert isinstance(error, dict)
        raw = error.get("code")
        code = raw if isinstance(raw, int) else -32603
        super().__init__(code, str(error.get("message", "task failed")), error.get("data"))
        self.task = task


async def _send_cancel(request: Coroutine[Any, Any, Any]) -> None:
    """Send a `tasks/cancel`, best effort, often while the caller is being cancelled: up to
    `CANCEL_TIMEOUT` seconds, less if the caller is cancelled again (then it stops waiting).
    Nothing of it is left running (past that it is cancelled, and awaited as long again at
    most), and its failure is retrieved and dropped: the caller's own outcome stands."""
    sending = asyncio.ensure_future(request)
    try:
        await asyncio.wait({sending}, timeout=CANCEL_TIMEOUT)
    except asyncio.CancelledError:
        pass  # cancelled again: the caller re-raises its own cancellation
    finally:
        if not sending.done():
            sending.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait({sending}, timeout=CANCEL_TIMEOUT)
        if sending.done() and not sending.cancelled():
            sending.exception()


def _poll_seconds(task: Mapping[str, Any]) -> float:
    value = task.get("pollIntervalMs")
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        value = DEFAULT_POLL_MS
    return min(value, MAX_POLL_MS) / 1000


def _check_task(task: Any, what: str) -> Json:
    if not isinstance(task, dict) or not isinstance(task.get("taskId"), str) \
            or not isinstance(task.get("status"), str):
        raise ProtocolError(f"{what} is not a task (needs taskId and status)")
    return task


class TaskHandle:
    """One task on the server. `last` is the latest state seen (a DetailedTask dict)."""

    def __init__(self, client: Client, task_id: str, last: Json | None = None) -> None:
        if not isinstance(task_id, str) or not task_id:
            raise ValueError("a task id is a non-empty string")
        self.client = client
        self.task_id = task_id
        self.last: Json = dict(last) if last else {"taskId": task_id, "status": "working"}
        self._answered: set[str] = set()

    @property
    def status(self) -> str:
        return str(self.last.get("status"))

    async def get(self) -> Json:
        """`tasks/get`: the task now (its result, error or input requests inlined)."""
        task = _check_task(await self.client.request("tasks/get", {"taskId": self.task_id}), "tasks/get result")
        self.last = task
        return task

    async def update(self, responses: Mapping[str, Any]) -> None:
        """`tasks/update`: answers to (some of) the task's outstanding input requests."""
        await self.client.request("tasks/update", {"taskId": self.task_id, "inputResponses": dict(responses)})
        self._answered.update(responses)

    async def cancel(self) -> None:
        """`tasks/cancel`: ask the server to stop it (cooperative; poll to see it end)."""
        await self.client.request("tasks/cancel", {"taskId": self.task_id})

    async def wait(self, *, on_status: StatusCallback | None = None,
                   answer: bool = True) -> CallToolResult:
        """Poll until the task ends; return its result, the `CallToolResult` that
        `call_tool` returns (raise TaskFailed or TaskWasCancelled otherwise). With `answer`,
        input requests go to the client's handlers and their answers back through
        `tasks/update`, each key once. Cancelling the awaiting code cancels the task."""
        from ..client.types import CallToolResult, convert

        result = await self.wait_raw(on_status=on_status, answer=answer)
        return convert(result, CallToolResult, "the task's tools/call result")

    async def wait_raw(self, *, on_status: StatusCallback | None = None, answer: bool = True) -> Json:
        """As `wait`, but the result as the server sent it (a dict)."""
        shown: tuple[Any, Any] | None = None
        task = self.last
        fetched = False
        try:
            while True:
                shown = await _report(on_status, task, shown)
                status = task.get("status")
                if status in TERMINAL:
                    if not fetched and not {"result", "error"} & task.keys():
                        task, fetched = await self.get(), True  # born terminal: fetch what it inlines
                        continue
                    return _outcome(task)
                if status == "input_required" and answer and "inputRequests" in task:
                    await self._answer(task)
                await asyncio.sleep(_poll_seconds(task))
                task, fetched = await self.get(), True
        except asyncio.CancelledError:
            await self._cancel_quietly()
            raise

    async def _answer(self, task: Json) -> None:
        requests = task.get("inputRequests")
        if not isinstance(requests, dict):
            raise ProtocolError("an input_required task has no inputRequests object")
        new = {key: req for key, req in requests.items() if key not in self._answered}
        if not new:
            return
        try:
            responses = await self.client.handlers.answer_all(new)
        except Unanswerable as exc:
            await self._cancel_quietly()
            raise InputRequiredError("unanswerable", str(exc), last_result=task, rounds=0) from None
        await self.update(responses)

    async def _cancel_quietly(self) -> None:
        await _send_cancel(self.cancel())


if TYPE_CHECKING:
    def _shaped(task: TaskHandle) -> handle.TaskHandle:
        """mypy holds that this handle is what `client.task()` says it returns."""
        return task


def _outcome(task: Json) -> Json:
    status = task.get("status")
    if status == "completed":
        result = task.get("result")
        if not isinstance(result, dict):
            raise ProtocolError("a completed task has no result object")
        return result
    if status == "failed":
        raise TaskFailed(task)
    raise TaskWasCancelled(task)


class TasksClient:
    """The client side of the extension (see the module docstring). `on_status(task)` is
    called whenever a followed task's status or status message changes."""

    name = EXTENSION
    capability: Mapping[str, Any] = {}

    def __init__(self, *, on_status: StatusCallback | None = None) -> None:
        self.on_status = on_status
        self.result_types: Mapping[str, ResultHandler] = {"task": self.follow}

    async def on_call_tool(self, client: Client, name: str, params: Json) -> CallToolResult | None:
        """On a 2025-11-25 session, a tool that requires a task is called as one."""
        if client.era == "legacy" and await legacy_wants_task(client, name):
            return await legacy_call(client, params, self.on_status)
        return None

    async def follow(self, client: Client, method: str, params: Json, result: Json) -> Json:
        if method != "tools/call":
            raise ProtocolError(f"server answered {method} with a task; only tools/call may be one")
        task = _check_task(result, "the task result")
        handle = TaskHandle(client, task["taskId"], {k: v for k, v in task.items() if k != "resultType"})
        return await handle.wait_raw(on_status=self.on_status)


async def start_tool(client: Client, name: str, arguments: Mapping[str, Any] | None = None) -> TaskHandle | CallToolResult:
    """`client.start_tool(...)`: call a tool without following a task; a `TaskHandle` if the
    server made one, else the ordinary result."""
    from ..client.types import CallToolResult, convert

    final = await client.call_raw(name, arguments)
    if final.get("resultType") == "task":
        if not isinstance(final.get("taskId"), str):
            raise ProtocolError("server answered with a task that has no taskId")
        return TaskHandle(client, final["taskId"], {k: v for k, v in final.items() if k != "resultType"})
    return convert(final, CallToolResult, "tools/call result")


# -- 2025-11-25 experimental tasks ---------------------------------------------------------------


async def legacy_wants_task(client: Client, name: str) -> bool:
    """On a 2025-11-25 session: does this tool require a task, and can the server make one?"""
    caps = client.server_capabilities.get("tasks")
    requests = caps.get("requests") if isinstance(caps, dict) else None
    tools = requests.get("tools") if isinstance(requests, dict) else None
    if not isinstance(tools, dict) or "call" not in tools:
        return False
    for tool in await client.list_tools():
        if tool.name == name:
            return isinstance(tool.execution, dict) and tool.execution.get("taskSupport") == "required"
    return False


async def legacy_call(client: Client, params: Json, on_status: StatusCallback | None) -> CallToolResult:
    """A tools/call as a 2025-11-25 task: create it, poll `tasks/get` (showing status), then
    `tasks/result`, which the server holds until the end and on which it sends any input
    requests (answered by the client's handlers like any server request)."""
    from ..client.types import CallToolResult, convert

    created = await client.request("tools/call", {**params, "task": {}})
    task = created.get("task")
    if not isinstance(task, dict) or not isinstance(task.get("taskId"), str):
        return convert(created, CallToolResult, "tools/call result")  # it answered directly
    task_id = task["taskId"]
    shown: tuple[Any, Any] | None = None
    try:
        while True:
            shown = await _report(on_status, task, shown)
            if task.get("status") in TERMINAL or task.get("status") == "input_required":
                break
            interval = task.get("pollInterval")
            await asyncio.sleep(min(interval if isinstance(interval, int) and interval > 0
                                    else DEFAULT_POLL_MS, MAX_POLL_MS) / 1000)
            task = await client.request("tasks/get", {"taskId": task_id})
        if task.get("status") == "cancelled":
            raise TaskWasCancelled(task)
        result = await client.request("tasks/result", {"taskId": task_id}, timeout=None)
    except asyncio.CancelledError:
        await _send_cancel(client.request("tasks/cancel", {"taskId": task_id}))
        raise
    return convert(result, CallToolResult, "tasks/result")


__all__ = ["EXTENSION", "TaskFailed", "TaskHandle", "TaskWasCancelled", "TasksClient",
           "legacy_call", "legacy_wants_task"]


async def _report(on_status: StatusCallback | None, task: Json, shown: tuple[Any, Any] | None) -> tuple[Any, Any] | None:
    """Call `on_status` when the task's status or message changed since `shown`; the new mark."""
    mark = (task.get("status"), task.get("statusMessage"))
    if on_status is None or mark == shown:
        return shown
    value = on_status(task)
    if asyncio.iscoroutine(value):
        await value
    return mark
