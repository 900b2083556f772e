"""How a task tool's failures surface: before the task exists they are the call's own answer,
after it they are the task's end state; a cancel wins over a handler that ignores it; a client
that leaves before the task exists stops the handler; an answer of the wrong type is refused
and the task keeps waiting; a question the client cannot answer fails the task."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import rondo  # noqa: E402
from rondo import sampling  # noqa: E402
from rondo.tasks import TaskCancelled  # noqa: E402
from tests.helpers.helpers_core import ALL_CAPS, INTERNAL_ERROR, INVALID_PARAMS, MISSING_CAPABILITY  # noqa: E402
from tests.helpers.polling import until  # noqa: E402
from tests.helpers.tasks_helpers import TASKS, Peer, accept, form  # noqa: E402

TEAPOT = -32042  # an application error code of the tool's own


def make_server() -> tuple[rondo.Server, list[str]]:
    server = rondo.Server("task-failures")
    events: list[str] = []

    @server.tool(task="optional")
    async def refuse(when: str, ctx: rondo.Context) -> str:
        if when == "after":
            await ctx.start_task()
        raise rondo.McpError(TEAPOT, f"refused {when} the task", {"why": "teapot"})

    @server.tool(task="optional")
    async def crash(when: str, ctx: rondo.Context) -> str:
        if when == "after":
            await ctx.start_task()
        raise RuntimeError("the secret database password is hunter2")

    @server.tool(task="optional")
    async def rounds_in_a_task(ctx: rondo.Context) -> Any:
        await ctx.start_task()
        return rondo.InputRequired({"name": form("name")})

    @server.tool(task="optional")
    async def stubborn(ctx: rondo.Context) -> str:
        await ctx.start_task()
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            events.append("ignored the cancel")
        return "finished anyway"

    @server.tool(task="optional")
    async def slow_to_start(ctx: rondo.Context) -> str:
        events.append("waiting to start the task")
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            events.append("stopped before the task")
            raise
        await ctx.start_task()  # pragma: no cover - the client leaves first
        return "never"

    @server.tool(task="optional")
    async def asks_for_a_number(ctx: rondo.Context) -> str:
        await ctx.start_task()
        answer = await ctx.ask("n", form("n", "integer"))
        return str(answer.content["n"])

    @server.tool(task="optional")
    async def wants_sampling(ctx: rondo.Context) -> str:
        await ctx.start_task()
        reply = await ctx.ask("llm", sampling.create_message(["Say hi"], 20))
        return str(reply)

    @server.tool(task="optional")
    def asks_after_the_cancel(ctx: rondo.Context) -> str:
        ctx.start_task()
        while not ctx.cancelled:
            threading.Event().wait(0.01)
        try:
            ctx.ask("late", form("late"))
        except TaskCancelled as exc:
            events.append(f"ask refused: {exc}")
            raise
        return "asked"  # pragma: no cover - the ask raises

    return server, events


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_an_error_before_the_task_is_the_calls_own_answer_after_it_the_tasks() -> None:
    server, _ = make_server()

    async def go() -> None:
        peer = Peer(server)
        error = await peer.error("tools/call", {"name": "refuse", "arguments": {"when": "before"}})
        assert error == {"code": TEAPOT, "message": "refused before the task",
                         "data": {"why": "teapot"}}
        created = await peer.tool("refuse", {"when": "after"})
        assert created["resultType"] == "task"
        failed = await peer.until(created["taskId"])
        assert failed["status"] == "failed"
        assert failed["error"] == {"code": TEAPOT, "message": "refused after the task",
                                   "data": {"why": "teapot"}}
        assert failed["statusMessage"] == "refused after the task"

    run(go())


def test_a_crash_is_a_masked_tool_error_before_the_task_and_the_tasks_result_after_it() -> None:
    server, _ = make_server()

    async def go() -> None:
        peer = Peer(server)
        before = await peer.tool("crash", {"when": "before"})
        assert before["resultType"] == "complete" and before["isError"] is True
        assert "hunter2" not in str(before)
        created = await peer.tool("crash", {"when": "after"})
        assert created["resultType"] == "task"
        done = await peer.until(created["taskId"])
        # A tool's exception is a tool error (isError), in a task as in a plain call.
        assert done["status"] == "completed" and done["result"]["isError"] is True
        assert "hunter2" not in str(done)

    run(go())


def test_a_running_task_cannot_end_with_input_required() -> None:
    server, _ = make_server()

    async def go() -> None:
        peer = Peer(server)
        created = await peer.tool("rounds_in_a_task")
        failed = await peer.until(created["taskId"])
        assert failed["status"] == "failed" and failed["error"]["code"] == INTERNAL_ERROR
        assert "use ctx.ask" in failed["error"]["message"]
        assert "inputRequests" not in failed

    run(go())


def test_a_handler_that_swallows_the_cancel_still_ends_cancelled() -> None:
    server, events = make_server()

    async def go() -> None:
        peer = Peer(server)
        task_id = (await peer.tool("stubborn"))["taskId"]
        await peer.until(task_id, "working")
        await peer.result("tasks/cancel", {"taskId": task_id})
        done = await peer.until(task_id)
        assert done["status"] == "cancelled" and "result" not in done
        assert events == ["ignored the cancel"]

    run(go())


def test_a_client_that_leaves_before_the_task_exists_stops_the_handler() -> None:
    server, events = make_server()

    async def go() -> None:
        peer = Peer(server)
        call = asyncio.ensure_future(peer.tool("slow_to_start"))
        await until(lambda: events, 5, "the handler never ran")  # not slept on: it is running
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        await until(lambda: len(events) == 2, 5, "the handler was never stopped")
        assert events == ["waiting to start the task", "stopped before the task"]

    run(go())


def test_an_answer_of_the_wrong_type_is_refused_and_the_task_keeps_waiting() -> None:
    server, _ = make_server()

    async def go() -> None:
        peer = Peer(server)
        task_id = (await peer.tool("asks_for_a_number"))["taskId"]
        parked = await peer.until(task_id, "input_required")
        assert list(parked["inputRequests"]) == ["n"]
        error = await peer.error("tasks/update", {"taskId": task_id,
                                                  "inputResponses": {"n": accept(n="seven")}})
        assert error["code"] == INVALID_PARAMS and "'n'" in error["message"]
        assert (await peer.get(task_id))["status"] == "input_required"
        await peer.result("tasks/update", {"taskId": task_id,
                                           "inputResponses": {"n": accept(n=7)}})
        done = await peer.until(task_id)
        assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "7"

    run(go())


def test_a_question_the_client_cannot_answer_fails_the_task_with_missing_capability() -> None:
    server, _ = make_server()
    no_sampling = {k: v for k, v in ALL_CAPS.items() if k != "sampling"}
    no_sampling["extensions"] = {TASKS: {}}

    async def go() -> None:
        peer = Peer(server, caps=no_sampling)
        task_id = (await peer.tool("wants_sampling"))["taskId"]
        failed = await peer.until(task_id)
        assert failed["status"] == "failed" and failed["error"]["code"] == MISSING_CAPABILITY
        assert "sampling" in str(failed["error"]["data"])
        assert "inputRequests" not in failed

    run(go())


def test_a_thread_asking_after_the_cancel_is_refused_with_task_cancelled() -> None:
    server, events = make_server()

    async def go() -> None:
        peer = Peer(server)
        task_id = (await peer.tool("asks_after_the_cancel"))["taskId"]
        await peer.result("tasks/cancel", {"taskId": task_id})
        assert (await peer.until(task_id))["status"] == "cancelled"
        async with asyncio.timeout(5):
            while not events:
                await asyncio.sleep(0.01)
        assert events == ["ask refused: the task was cancelled"]

    run(go())
