"""The tasks extension on the client: following a task to its end with the MRTR handlers,
polling pace, cancelling when the caller gives up, the handle API and resuming by id."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

import rondo  # noqa: E402
from rondo import elicit  # noqa: E402
from rondo.client import CallToolResult, Client, ElicitRequest, ElicitResult  # noqa: E402
from rondo.tasks import TaskFailed, TaskHandle, Tasks, TaskWasCancelled  # noqa: E402

TASKS = "io.modelcontextprotocol/tasks"


def form(field: str, kind: str = "string") -> dict[str, Any]:
    return elicit.form(f"{field}?", {"type": "object", "properties": {field: {"type": kind}},
                                     "required": [field]})


def build() -> rondo.Server:
    server = rondo.Server("client-tasks")
    server.extension(Tasks(poll_interval_ms=100))

    @server.tool(task="optional")
    async def report(topic: str, ctx: rondo.Context) -> str:
        """Asks who it is for (MRTR), then writes as a task, asking once more halfway."""
        who = (await ctx.ask("who", form("who"))).content["who"]
        await ctx.start_task(f"writing about {topic}")
        await ctx.report_progress(1, 2, message="half way")
        more = (await ctx.ask("more", form("more", "boolean"))).content["more"]
        return f"{topic} for {who}{' (long)' if more else ''}"

    @server.tool(task="optional")
    async def wait(seconds: float, ctx: rondo.Context) -> str:
        await ctx.start_task()
        await asyncio.sleep(seconds)
        return "waited"

    @server.tool(task="required")
    async def broken(ctx: rondo.Context) -> str:
        await ctx.start_task()
        raise rondo.McpError(-32603, "kaput")

    @server.tool(task="required")
    async def tool_error(ctx: rondo.Context) -> str:
        await ctx.start_task()
        raise rondo.ToolError("bad input")

    return server


def answers(request: ElicitRequest) -> Any:
    field = next(iter(request.requested_schema["properties"]))
    return ElicitResult("accept", {field: True if field == "more" else "Grace"})


def spy(client: Client) -> list[str]:
    methods: list[str] = []
    original = client._rpc

    async def recording(method: str, params: Any, **kw: Any) -> Any:
        methods.append(method)
        return await original(method, params, **kw)

    client._rpc = recording  # type: ignore[method-assign]
    return methods


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_call_tool_follows_a_task_answering_both_ways_with_the_same_handler() -> None:
    statuses: list[tuple[str, str | None]] = []
    asked: list[str] = []

    def handler(request: ElicitRequest) -> Any:
        asked.append(request.message)
        return answers(request)

    async def go() -> None:
        tasks = rondo.tasks.TasksClient(on_status=lambda t: statuses.append((t["status"], t.get("statusMessage"))))
        async with Client(build(), on_elicit=handler, tasks=tasks) as client:
            assert client.handlers.capabilities()["extensions"] == {TASKS: {}}
            sent = spy(client)
            result = await client.call_tool("report", {"topic": "tides"})
            assert isinstance(result, CallToolResult) and result.text == "tides for Grace (long)"
            assert sent[:2] == ["tools/call", "tools/call"]  # the MRTR round, then the task
            assert set(sent[2:]) == {"tasks/get", "tasks/update"} and sent.count("tasks/update") == 1

    run(go())
    assert asked == ["who?", "more?"]  # each question once, though polls showed "more" again
    assert statuses[0][0] == "working" and ("completed", statuses[-1][1]) == statuses[-1]
    assert ("input_required", "half way") in statuses


def test_polling_honours_poll_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    # No wall clock: the task ends after the client's third wait, and every wait between two
    # polls must be the server's pollIntervalMs (a busy loop would poll without one).
    from rondo.tasks import client as tasks_client

    waits: list[float] = []
    release = asyncio.Event()
    real = tasks_client._poll_seconds

    def recorded(task: Any) -> float:
        seconds = real(task)
        waits.append(seconds)
        if len(waits) == 3:
            release.set()
        return seconds

    monkeypatch.setattr(tasks_client, "_poll_seconds", recorded)
    server = rondo.Server("paced")
    server.extension(Tasks(poll_interval_ms=100))

    @server.tool(task="required")
    async def held(ctx: rondo.Context) -> str:
        await ctx.start_task()
        await release.wait()
        return "released"

    async def go() -> None:
        async with Client(server, tasks=True) as client:
            sent = spy(client)
            result = await asyncio.wait_for(client.call_tool("held"), 30)
            assert result.text == "released"
            polls = sent.count("tasks/get")
            assert waits[:3] == [0.1, 0.1, 0.1] and set(waits) == {0.1}
            assert 3 <= polls <= len(waits) + 1, (polls, waits)  # a wait before every poll

    run(go())


def test_cancelling_the_caller_cancels_the_task() -> None:
    seen: list[str] = []

    async def go() -> None:
        server = build()
        tasks = rondo.tasks.TasksClient(on_status=lambda t: seen.append(t["taskId"]))
        async with Client(server, tasks=tasks) as client:
            with pytest.raises(TimeoutError, match="^$"):  # wait_for's own, not one from the call
                await asyncio.wait_for(client.call_tool("wait", {"seconds": 30}), 0.3)
            task = await client.task(seen[0]).get()
            async with asyncio.timeout(3):
                while task["status"] != "cancelled":
                    await asyncio.sleep(0.05)
                    task = await client.task(seen[0]).get()

    run(go())


def test_failed_and_tool_error_outcomes() -> None:
    async def go() -> None:
        async with Client(build(), tasks=True) as client:
            with pytest.raises(TaskFailed, match="^kaput$") as failed:
                await client.call_tool("broken")
            assert failed.value.code == -32603 and failed.value.message == "kaput"
            assert isinstance(failed.value, rondo.McpError)
            result = await client.call_tool("tool_error")
            assert result.is_error and "bad input" in result.text

    run(go())


def test_without_tasks_a_required_task_tool_is_refused_and_optional_runs_inline() -> None:
    async def go() -> None:
        async with Client(build()) as client:
            assert "extensions" not in client.handlers.capabilities()
            with pytest.raises(rondo.McpError, match="^Missing required client capability$") as refused:
                await client.call_tool("broken")
            assert refused.value.code == -32021
            assert (await client.call_tool("wait", {"seconds": 0.01})).text == "waited"

    run(go())


def test_the_handle_api_and_resuming_from_another_client() -> None:
    async def go() -> None:
        server = build()
        async with Client(server, on_elicit=answers, tasks=True) as first:
            handle = await first.start_tool("report", {"topic": "bees"})
            assert isinstance(handle, TaskHandle) and handle.status == "working"
            task_id = handle.task_id
        # Another process (here: another client) picks the task up by its id.
        async with Client(server, tasks=True) as second:
            again = second.task(task_id)
            async with asyncio.timeout(5):
                while (await again.get())["status"] != "input_required":
                    await asyncio.sleep(0.05)
            assert list(again.last["inputRequests"]) == ["more"]
            await again.update({"more": {"action": "accept", "content": {"more": False}}})
            result = await again.wait(answer=False)
            assert isinstance(result, CallToolResult)  # what call_tool returns, not a dict
            assert result.text == "bees for Grace" and not result.is_error
            cancelled = await second.start_tool("wait", {"seconds": 30})
            assert isinstance(cancelled, TaskHandle)
            await cancelled.cancel()
            with pytest.raises(TaskWasCancelled, match=f"^task {re.escape(cancelled.task_id)} was cancelled"):
                await cancelled.wait()
            assert isinstance(await second.start_tool("wait", {"seconds": 0}), TaskHandle)

    run(go())


def test_a_task_answer_to_a_method_that_cannot_be_one_is_refused() -> None:
    async def go() -> None:
        ext = rondo.tasks.TasksClient()
        async with Client(build(), tasks=ext) as client:
            with pytest.raises(rondo.client.ProtocolError, match="only tools/call"):
                await ext.follow(client, "prompts/get", {}, {"resultType": "task", "taskId": "t",
                                                           "status": "working"})
            with pytest.raises(rondo.client.ProtocolError, match="not a task"):
                await ext.follow(client, "tools/call", {}, {"resultType": "task"})

    run(go())


# -- a 2025-11-25 server's experimental tasks -------------------------------------------------


class LegacyTaskServer(rondo.Server):
    """A 2025-11-25 peer with that revision's experimental tasks, built for this test from
    rondo's method table: `params.task` on tools/call, `tasks/get`, `tasks/result`,
    `tasks/cancel`, and a tool whose `execution.taskSupport` is "required"."""

    def capabilities(self) -> dict[str, Any]:
        caps = super().capabilities()
        caps["tasks"] = {"requests": {"tools": {"call": {}}}, "cancel": {}}
        return caps


def legacy_task_server() -> tuple[LegacyTaskServer, dict[str, Any]]:
    from rondo.core.methods import tools_call

    server = LegacyTaskServer("legacy-tasks")
    jobs: dict[str, Any] = {}

    @server.tool
    async def build(target: str) -> str:
        await asyncio.sleep(0.3)
        return f"built {target}"

    server.tools["build"].wire["execution"] = {"taskSupport": "required"}

    def view(job: dict[str, Any]) -> dict[str, Any]:
        return {"taskId": job["id"], "status": job["status"], "statusMessage": job["status"],
                "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z",
                "ttl": 60_000, "pollInterval": 50}

    @server.method("tools/call", era="both")
    async def call(core: Any, req: Any) -> dict[str, Any]:
        if "task" not in req.params:
            if req.params.get("name") == "build":
                raise rondo.McpError(-32601, "build requires a task")
            return await tools_call(core, req)
        job: dict[str, Any] = {"id": f"job-{len(jobs) + 1}", "status": "working"}

        async def work() -> None:
            try:
                job["result"] = await tools_call(core, req)
                job["status"] = "completed"
            except asyncio.CancelledError:
                job["status"] = "cancelled"

        job["runner"] = asyncio.ensure_future(work())
        jobs[job["id"]] = job
        return {"task": view(job)}

    @server.method("tasks/get", era="legacy")
    async def get(core: Any, req: Any) -> dict[str, Any]:
        return view(jobs[req.params["taskId"]])

    @server.method("tasks/result", era="legacy")
    async def result(core: Any, req: Any) -> dict[str, Any]:
        job = jobs[req.params["taskId"]]
        await asyncio.wait({job["runner"]})
        return job["result"]

    @server.method("tasks/cancel", era="legacy")
    async def cancel(core: Any, req: Any) -> dict[str, Any]:
        jobs[req.params["taskId"]]["runner"].cancel()
        return view(jobs[req.params["taskId"]])

    return server, jobs


def test_a_legacy_servers_required_task_tool_is_called_as_a_task() -> None:
    server, jobs = legacy_task_server()
    statuses: list[str] = []

    async def go() -> None:
        tasks = rondo.tasks.TasksClient(on_status=lambda t: statuses.append(t["status"]))
        async with Client(server, protocol="2025-11-25", tasks=tasks) as client:
            assert client.era == "legacy"
            sent = spy(client)
            result = await client.call_tool("build", {"target": "docs"})
            assert result.text == "built docs"
            # The tool list says it needs a task; then the call, polls and the result.
            assert sent[:2] == ["tools/list", "tools/call"] and "tasks/get" in sent
            assert sent[-1] == "tasks/result"
        async with Client(server, protocol="2025-11-25") as plain:  # tasks not asked for
            with pytest.raises(rondo.McpError, match="^build requires a task$") as refused:
                await plain.call_tool("build", {"target": "docs"})
            assert refused.value.code == -32601

    run(go())
    assert statuses[0] == "working" and jobs["job-1"]["status"] == "completed"


def test_cancelling_a_legacy_task_call_sends_tasks_cancel() -> None:
    server, jobs = legacy_task_server()

    async def go() -> None:
        async with Client(server, protocol="2025-11-25", tasks=True) as client:
            sent = spy(client)
            call = asyncio.ensure_future(client.call_tool("build", {"target": "site"}))
            await asyncio.sleep(0.1)
            call.cancel()
            with pytest.raises(asyncio.CancelledError, match="^$"):  # our cancel(), given no message
                await call
            assert sent[-1] == "tasks/cancel"
            async with asyncio.timeout(5):  # polled with a deadline, not slept on
                while jobs["job-1"]["status"] != "cancelled":
                    await asyncio.sleep(0.01)
        assert jobs["job-1"]["status"] == "cancelled"

    run(go())
