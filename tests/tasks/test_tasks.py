"""The tasks extension on the server: opting in, the MRTR/task split, in-task questions,
cancellation, leases, principals, expiry, bounds and the method surface."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

import rondo  # noqa: E402
from rondo.tasks import MemoryTaskStore, TaskRecord, Tasks  # noqa: E402
from tests.helpers.helpers_core import (  # noqa: E402
    ALL_CAPS,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_CAPABILITY,
)
from tests.helpers.tasks_helpers import TASKS, Peer, accept, form  # noqa: E402

NEEDS_TASKS = {"requiredCapabilities": {"extensions": {TASKS: {}}}}


def make_server(**tasks_options: Any) -> rondo.Server:
    server = rondo.Server("tasks-test")
    if tasks_options:
        server.extension(Tasks(**tasks_options))
    cleanup: list[str] = []
    server.cleanup = cleanup  # type: ignore[attr-defined]

    @server.tool
    def plain(name: str) -> str:
        return f"Hello, {name}!"

    @server.tool(task="optional")
    async def slow(seconds: float, ctx: rondo.Context) -> str:
        if seconds <= 0:
            return "at once"
        await ctx.start_task("starting")
        await ctx.report_progress(0.5, message="half way")
        await asyncio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool(task="required")
    async def gather_then_run(ctx: rondo.Context) -> str:
        name = (await ctx.ask("name", form("name"))).content["name"]
        await ctx.start_task()
        ok = (await ctx.ask("go", form("go", "boolean"))).content["go"]
        return f"{name}: {'went' if ok else 'stayed'}"

    @server.tool(task="optional")
    async def two_questions(ctx: rondo.Context) -> str:
        await ctx.start_task()
        answers = await ctx.ask_all({"a": form("a"), "b": form("b")})
        return answers["a"].content["a"] + answers["b"].content["b"]

    @server.tool(task="optional")
    async def same_key_twice(ctx: rondo.Context) -> str:
        await ctx.start_task()
        first = (await ctx.ask("step", form("step"))).content["step"]
        second = (await ctx.ask("step", form("step"))).content["step"]
        return f"{first},{second}"

    @server.tool(task="optional")
    async def careful(ctx: rondo.Context) -> str:
        await ctx.start_task()
        try:
            await ctx.ask("sure", form("sure", "boolean"))
            return "asked"
        finally:
            cleanup.append("cleaned up")

    @server.tool(task="optional")
    def blocking(ctx: rondo.Context) -> str:
        ctx.start_task()
        answer = ctx.ask("word", form("word"))
        return f"thread got {answer.content['word']} in task {ctx.task_id is not None}"

    @server.tool(task="optional")
    def blocking_loop(ctx: rondo.Context) -> str:
        ctx.start_task()
        deadline = time.monotonic() + 5
        while not ctx.cancelled and time.monotonic() < deadline:
            time.sleep(0.01)
        cleanup.append("thread saw the cancel" if ctx.cancelled else "thread timed out")
        return "done"

    return server


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# -- opting in and the surface -----------------------------------------------------------------


def test_only_task_tools_advertise_the_extension() -> None:
    plain = rondo.Server("plain")
    plain.tool(lambda: "x")

    async def go() -> None:
        caps = (await Peer(plain).result("server/discover"))["capabilities"]
        assert "extensions" not in caps and "tasks" not in caps
        caps = (await Peer(make_server()).result("server/discover"))["capabilities"]
        assert caps["extensions"] == {TASKS: {}} and "tasks" not in caps

    run(go())


def test_a_bad_task_mode_fails_at_registration() -> None:
    with pytest.raises(ValueError, match="task must be"):
        rondo.Server("x").tool(task="sometimes")(lambda: "x")  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="ttl_ms"):
        Tasks(ttl_ms=0)
    with pytest.raises(TypeError, match="TaskStore"):
        Tasks(store=object())  # type: ignore[arg-type]


def test_create_poll_complete_with_status_messages() -> None:
    async def go() -> None:
        peer = Peer(make_server())
        created = await peer.tool("slow", {"seconds": 0.2})
        assert created["resultType"] == "task" and created["status"] == "working"
        assert set(created) >= {"taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"}
        assert not {"requestState", "inputRequests", "result", "error"} & set(created)
        assert len(created["taskId"]) >= 22  # >= 128 bits of base64url
        first = await peer.get(created["taskId"])  # durable before the id was handed out
        assert first["resultType"] == "complete" and first["taskId"] == created["taskId"]
        deadline = time.monotonic() + 10
        while (await peer.get(created["taskId"])).get("statusMessage") != "half way":
            assert time.monotonic() < deadline, "the task never reported half way"
            await asyncio.sleep(0.01)
        done = await peer.until(created["taskId"])
        assert done["status"] == "completed"
        assert done["result"]["content"] == [{"type": "text", "text": "slept 0.2"}]
        assert "_meta" not in done["result"] and done["result"]["resultType"] == "complete"

    run(go())


def test_immediate_result_and_non_declaring_clients() -> None:
    async def go() -> None:
        peer = Peer(make_server())
        assert (await peer.tool("slow", {"seconds": 0}))["resultType"] == "complete"
        sync = await peer.tool("slow", {"seconds": 0.01}, caps=ALL_CAPS)  # no extension: runs inline
        assert sync["resultType"] == "complete" and sync["content"][0]["text"] == "slept 0.01"
        error = await peer.error("tools/call", {"name": "gather_then_run"}, caps=ALL_CAPS)
        assert error["code"] == MISSING_CAPABILITY and error["data"] == NEEDS_TASKS
        for method in ("tasks/get", "tasks/update", "tasks/cancel"):
            error = await peer.error(method, {"taskId": "x", "inputResponses": {}}, caps=ALL_CAPS)
            assert error["code"] == MISSING_CAPABILITY and error["data"] == NEEDS_TASKS
        for method in ("tasks/result", "tasks/list"):
            assert (await peer.error(method, {"taskId": "x"}))["code"] == METHOD_NOT_FOUND
        assert (await peer.error("tasks/get", {"taskId": "nope"}))["code"] == INVALID_PARAMS
        assert (await peer.error("tasks/get", {"taskId": 7}))["code"] == INVALID_PARAMS
        legacy = await peer.tool("plain", {"name": "x"}, )
        assert legacy["resultType"] == "complete"

    run(go())


def test_a_legacy_task_param_promotes_nothing() -> None:
    async def go() -> None:
        result = await Peer(make_server()).result(
            "tools/call", {"name": "plain", "arguments": {"name": "a"}, "task": {"ttl": 1000}})
        assert result["resultType"] == "complete" and "taskId" not in result

    run(go())


# -- the two ways to ask ---------------------------------------------------------------------


def test_ask_before_the_task_is_mrtr_and_after_it_parks_the_task() -> None:
    async def go() -> None:
        peer = Peer(make_server())
        round1 = await peer.tool("gather_then_run")
        assert round1["resultType"] == "input_required" and "taskId" not in round1
        assert list(round1["inputRequests"]) == ["name"]
        created = await peer.result("tools/call", {
            "name": "gather_then_run", "arguments": {},
            "inputResponses": {"name": accept(name="Ada")}, "requestState": round1["requestState"]})
        assert created["resultType"] == "task"
        assert "requestState" not in created and "inputRequests" not in created
        parked = await peer.until(created["taskId"], "input_required")
        assert list(parked["inputRequests"]) == ["go"] and "requestState" not in parked
        ack = await peer.result("tasks/update", {"taskId": created["taskId"],
                                                 "inputResponses": {"go": accept(go=True)}})
        assert ack == {"resultType": "complete", "_meta": ack["_meta"]}
        done = await peer.until(created["taskId"])
        assert done["result"]["content"][0]["text"] == "Ada: went"

    run(go())


def test_partial_answers_keep_it_parked_and_strays_are_ignored() -> None:
    async def go() -> None:
        peer = Peer(make_server())
        task_id = (await peer.tool("two_questions"))["taskId"]
        parked = await peer.until(task_id, "input_required")
        assert sorted(parked["inputRequests"]) == ["a", "b"]
        await peer.result("tasks/update", {"taskId": task_id, "inputResponses": {
            "a": accept(a="x"), "never-asked": {"whatever": 1}}})
        after = await peer.get(task_id)
        assert after["status"] == "input_required" and list(after["inputRequests"]) == ["b"]
        # An answer to an already answered key changes nothing; a wrong one is -32602.
        await peer.result("tasks/update", {"taskId": task_id, "inputResponses": {"a": accept(a="zzz")}})
        bad = await peer.error("tasks/update", {"taskId": task_id, "inputResponses": {"b": accept(b=5)}})
        assert bad["code"] == INVALID_PARAMS and "'b'" in bad["message"]
        await peer.result("tasks/update", {"taskId": task_id, "inputResponses": {"b": accept(b="y")}})
        assert (await peer.until(task_id))["result"]["content"][0]["text"] == "xy"

    run(go())


def test_keys_are_unique_over_a_tasks_life() -> None:
    async def go() -> None:
        peer = Peer(make_server())
        task_id = (await peer.tool("same_key_twice"))["taskId"]
        first = await peer.until(task_id, "input_required")
        assert list(first["inputRequests"]) == ["step"]
        await peer.result("tasks/update", {"taskId": task_id, "inputResponses": {"step": accept(step="1")}})
        async with asyncio.timeout(5):
            while list((second := await peer.get(task_id)).get("inputRequests", {})) != ["step.2"]:
                await asyncio.sleep(0.02)
        # The old key is spent: answering it again is ignored, the new one is what counts.
        await peer.result("tasks/update", {"taskId": task_id, "inputResponses": {"step": accept(step="x")}})
        assert (await peer.get(task_id))["status"] == "input_required"
        await peer.result("tasks/update", {"taskId": task_id, "inputResponses": {"step.2": accept(step="2")}})
        assert (await peer.until(task_id))["result"]["content"][0]["text"] == "1,2"
        assert second["status"] == "input_required"

    run(go())


def test_concurrent_updates_all_land() -> None:
    async def go() -> None:
        peer = Peer(make_server())
        task_id = (await peer.tool("two_questions"))["taskId"]
        await peer.until(task_id, "input_required")
        acks = await asyncio.gather(
            peer.result("tasks/update", {"taskId": task_id, "inputResponses": {"a": accept(a="1")}}),
            peer.result("tasks/update", {"taskId": task_id, "inputResponses": {"b": accept(b="2")}}),
            peer.result("tasks/update", {"taskId": task_id, "inputResponses": {"a": accept(a="late")}}),
        )
        assert all(ack["resultType"] == "complete" for ack in acks)
        assert (await peer.until(task_id))["result"]["content"][0]["text"] == "12"

    run(go())


def test_a_sync_tool_runs_its_task_in_a_thread_and_asks_there() -> None:
    async def go() -> None:
        peer = Peer(make_server())
        task_id = (await peer.tool("blocking"))["taskId"]
        await peer.until(task_id, "input_required")
        await peer.result("tasks/update", {"taskId": task_id, "inputResponses": {"word": accept(word="hi")}})
        done = await peer.until(task_id)
        assert done["result"]["content"][0]["text"] == "thread got hi in task True"

    run(go())


# -- cancellation, leases, expiry -------------------------------------------------------------


def test_cancel_during_a_question_runs_the_cleanup_and_withdraws_it() -> None:
    server = make_server()

    async def go() -> None:
        peer = Peer(server)
        task_id = (await peer.tool("careful"))["taskId"]
        await peer.until(task_id, "input_required")
        ack = await peer.result("tasks/cancel", {"taskId": task_id})
        assert set(ack) <= {"resultType", "_meta"}
        done = await peer.until(task_id)
        assert done["status"] == "cancelled" and "inputRequests" not in done
        assert server.cleanup == ["cleaned up"]  # type: ignore[attr-defined]
        # Terminal: cancelling again acks the same way, updates are ignored.
        assert (await peer.result("tasks/cancel", {"taskId": task_id}))["resultType"] == "complete"
        await peer.result("tasks/update", {"taskId": task_id, "inputResponses": {"sure": accept(sure=True)}})
        assert (await peer.get(task_id))["status"] == "cancelled"

    run(go())


def test_a_thread_sees_the_cancel() -> None:
    server = make_server()

    async def go() -> None:
        peer = Peer(server)
        task_id = (await peer.tool("blocking_loop"))["taskId"]
        await peer.result("tasks/cancel", {"taskId": task_id})
        assert (await peer.until(task_id))["status"] == "cancelled"
        async with asyncio.timeout(5):
            while not server.cleanup:  # type: ignore[attr-defined]
                await asyncio.sleep(0.01)
        assert server.cleanup == ["thread saw the cancel"]  # type: ignore[attr-defined]

    run(go())


def test_a_task_whose_worker_died_fails_once_its_lease_lapses() -> None:
    store = MemoryTaskStore()
    server = make_server(store=store)

    async def go() -> None:
        peer = Peer(server)
        now = time.time()
        # What a worker that died mid-task leaves behind: a running task, a lease nobody renews.
        await store.create(TaskRecord(id="orphan", principal=None, created=now, updated=now,
                                      ttl_ms=60_000, poll_ms=100, lease=now + 1.0, worker="gone"))
        assert (await peer.get("orphan"))["status"] == "working"
        failed = await peer.until("orphan", timeout=5)  # polled past the lease, not slept on
        assert failed["status"] == "failed" and failed["error"]["code"] == INTERNAL_ERROR
        assert "lease" in failed["error"]["message"]

    run(go())


def test_a_live_worker_renews_its_lease_past_many_lease_periods() -> None:
    # Renewed every third of the lease: the task outlives two lease periods. The lease is long
    # enough that an event loop stalled for up to a second by a loaded machine still renews in time.
    store = MemoryTaskStore()
    server = make_server(store=store, lease=1.5)

    async def go() -> None:
        peer = Peer(server)
        task_id = (await peer.tool("slow", {"seconds": 3.5}))["taskId"]
        assert (await peer.until(task_id, timeout=10))["status"] == "completed"

    run(go())


def test_ttl_expiry_and_no_early_expiry() -> None:
    clock = [1000.0]
    store = MemoryTaskStore(clock=lambda: clock[0])

    async def go() -> None:
        record = TaskRecord(id="t1", principal=None, created=1000.0, updated=1000.0,
                            ttl_ms=2_000, poll_ms=100, status="completed")
        await store.create(record)
        clock[0] = 1001.999
        assert await store.get("t1") is not None  # within its ttlMs
        clock[0] = 1002.0
        assert await store.get("t1") is None and len(store) == 0

    run(go())


def test_the_memory_store_stays_bounded() -> None:
    store = MemoryTaskStore(max_tasks=50)
    server = make_server(store=store)

    async def go() -> None:
        peer = Peer(server)
        ids = []
        for _ in range(1_000):
            created = await peer.tool("slow", {"seconds": 0.001})
            ids.append(created["taskId"])
            assert len(store) <= 50
        assert len(set(ids)) == 1_000
        await peer.until(ids[-1])
        # Every slot held by a live task: one more is refused, nothing running is dropped.
        full = MemoryTaskStore(max_tasks=2)
        for i in range(2):
            await full.create(TaskRecord(id=f"live{i}", principal=None, created=time.time(),
                                         updated=time.time(), ttl_ms=None, poll_ms=100))
        with pytest.raises(rondo.McpError, match=r"on this server \(limit 2, max_tasks\)") as refused:
            await full.create(TaskRecord(id="one-more", principal=None, created=time.time(),
                                         updated=time.time(), ttl_ms=None, poll_ms=100))
        assert refused.value.code == -32000 and len(full) == 2

    run(go())


# -- principals ---------------------------------------------------------------------------------


def test_another_principal_sees_an_unknown_task() -> None:
    server = make_server(principal=lambda ctx: ctx.auth)

    async def go() -> None:
        alice, bob = Peer(server, auth="alice"), Peer(server, auth="bob")
        task_id = (await alice.tool("careful"))["taskId"]
        await alice.until(task_id, "input_required")
        unknown = await bob.error("tasks/get", {"taskId": "no-such-task"})
        for method, extra in (("tasks/get", {}), ("tasks/update", {"inputResponses": {
                "sure": accept(sure=True)}}), ("tasks/cancel", {})):
            error = await bob.error(method, {"taskId": task_id, **extra})
            assert error == unknown  # exactly like an unknown id: code, message, no data
        assert (await alice.get(task_id))["status"] == "input_required"  # bob changed nothing
        await alice.result("tasks/cancel", {"taskId": task_id})

    run(go())


# -- notifications/tasks ------------------------------------------------------------------------


def test_listen_streams_task_changes_for_its_own_tasks() -> None:
    server = make_server(principal=lambda ctx: ctx.auth)

    async def go() -> None:
        alice, bob = Peer(server, auth="alice"), Peer(server, auth="bob")
        task_id = (await alice.tool("two_questions"))["taskId"]
        other = (await bob.tool("slow", {"seconds": 5}))["taskId"]
        notes: list[dict[str, Any]] = []
        stream = asyncio.ensure_future(alice.call(
            "subscriptions/listen", {"notifications": {"taskIds": [task_id, other, "nope"]}}, notes=notes))
        await alice.until(task_id, "input_required")
        await alice.result("tasks/update", {"taskId": task_id, "inputResponses": {
            "a": accept(a="1"), "b": accept(b="2")}})
        async with asyncio.timeout(5):
            while not any(n["method"] == "notifications/tasks" and n["params"]["status"] == "completed"
                          for n in notes):
                await asyncio.sleep(0.02)
        stream.cancel()
        ack = notes[0]
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["notifications"] == {"taskIds": [task_id]}  # not bob's, not unknown
        tasks = [n["params"] for n in notes[1:]]
        assert all(t["taskId"] == task_id for t in tasks)
        assert all(t["_meta"]["io.modelcontextprotocol/subscriptionId"] == ack["params"]["_meta"][
            "io.modelcontextprotocol/subscriptionId"] for t in tasks)
        assert tasks[-1]["result"]["content"][0]["text"] == "12"
        error = await alice.error("subscriptions/listen", {"notifications": {"taskIds": [task_id]}},
                                  caps=ALL_CAPS)
        assert error["code"] == MISSING_CAPABILITY
        await bob.result("tasks/cancel", {"taskId": other})

    run(go())


# -- the legacy era ----------------------------------------------------------------------------


def test_a_legacy_session_runs_a_task_tool_synchronously() -> None:
    from rondo.testing import connect

    server = make_server()

    async def go() -> None:
        conn = connect(server)
        init = await conn.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}})
        assert init is not None and "result" in init
        await conn.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        response = await conn.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                    "params": {"name": "slow", "arguments": {"seconds": 0.05}}})
        assert response is not None
        assert response["result"]["content"] == [{"type": "text", "text": "slept 0.05"}]
        assert "taskId" not in response["result"] and "task" not in response["result"]
        required = await conn.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                    "params": {"name": "gather_then_run", "arguments": {}}})
        assert required is not None and "task" not in required.get("result", {})

    run(go())


# -- bad input ----------------------------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(task_id=JSON | st.text(max_size=40), responses=JSON)
def test_any_tasks_params_get_an_answer_never_a_crash(task_id: Any, responses: Any) -> None:
    server = make_server()

    async def go() -> None:
        peer = Peer(server)
        real = (await peer.tool("two_questions"))["taskId"]
        await peer.until(real, "input_required")
        for target in (task_id, real):
            for method in ("tasks/get", "tasks/update", "tasks/cancel"):
                response = await peer.call(method, {"taskId": target, "inputResponses": responses})
                if "error" in response:
                    assert response["error"]["code"] == INVALID_PARAMS, response
                else:
                    assert response["result"]["resultType"] == "complete"

    run(go())
