"""Tasks through rondo.proxy: the upstream's task comes back under a proxy task id bound to the
caller's principal and to the upstream; tasks/get|update|cancel are relayed with the upstream's
id (and its Mcp-Name); forged, edited and other principals' ids never reach the upstream."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

import rondo
from rondo import elicit
from rondo.client import Client, ElicitRequest, ElicitResult
from rondo.state import StatePolicy
from rondo.tasks.client import TaskWasCancelled
from tests.helpers.gateway_upstream import Recorder, served

TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
CONFIRM = elicit.form("Delete it?", {"type": "object", "properties": {
    "confirm": {"type": "boolean"}}, "required": ["confirm"]})
CANCELLED: list[str] = []


def task_upstream() -> rondo.Server:
    up = rondo.Server("task-upstream")

    @up.tool(task="optional")
    async def delete(filename: str, ctx: rondo.Context) -> str:
        """A task that asks for confirmation while it runs."""
        await ctx.start_task(f"about to delete {filename}")
        answer = await ctx.ask("confirm", CONFIRM)
        return f"deleted {filename}" if answer.content["confirm"] else f"kept {filename}"

    @up.tool(task="optional")
    async def slow(seconds: float, ctx: rondo.Context) -> str:
        """Sleeps as a task."""
        await ctx.start_task("sleeping")
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            CANCELLED.append(f"{seconds:g}")
            raise
        return f"slept {seconds:g}"

    @up.tool
    def plain() -> str:
        """No task."""
        return "plain"

    return up


def yes(request: ElicitRequest) -> Any:
    return ElicitResult("accept", {"confirm": True})


def by_name(ctx: Any) -> str | None:
    """Who the caller is, for these tests: the client's name (a real proxy uses rondo.auth)."""
    info = ctx.client_info or {}
    return info.get("name")


@pytest.fixture
def proxied() -> Any:
    recorder = Recorder(task_upstream().asgi())
    with served(recorder) as (url, _):
        front = rondo.proxy(url, state=StatePolicy(principal=by_name))
        with served(front.asgi()) as (front_url, _):
            yield front_url, recorder


def upstream_calls(recorder: Recorder, method: str) -> list[dict[str, str]]:
    return [post for post in recorder.posts if post.get("mcp-method") == method]


def test_a_task_with_a_question_runs_to_its_end_through_the_proxy(proxied: Any) -> None:
    front_url, recorder = proxied

    async def go() -> None:
        async with Client(front_url, name="alice", tasks=True, on_elicit=yes) as client:
            discovered = await client.discover()
            assert "io.modelcontextprotocol/tasks" in discovered.capabilities["extensions"]
            raw = await client.call_raw("slow", {"seconds": 0.2})
            assert raw["resultType"] == "task" and raw["taskId"].startswith("t2.")
            assert "requestState" not in raw
            handle = client.task(raw["taskId"])
            assert (await handle.wait()).text == "slept 0.2"
            assert handle.last["taskId"] == raw["taskId"]  # as the client holds it
            assert handle.last["status"] == "completed"
            # The client's follower polls, answers the task's question with tasks/update.
            assert (await client.call_tool("delete", {"filename": "a.txt"})).text == "deleted a.txt"

    asyncio.run(go())
    gets = upstream_calls(recorder, "tasks/get")
    assert gets, "no tasks/get reached the upstream"
    # Upstream, the task is named by the upstream's own id (Mcp-Name), never the proxy's.
    assert all(not get["mcp-name"].startswith("t2.") for get in gets)
    assert upstream_calls(recorder, "tasks/update"), "the answer did not go upstream"


def test_task_ids_are_bound_to_the_principal_and_checked_before_the_upstream(
        proxied: Any) -> None:
    front_url, recorder = proxied

    async def go() -> None:
        async with Client(front_url, name="alice", tasks=True) as alice, \
                Client(front_url, name="bob", tasks=True) as bob:
            raw = await alice.call_raw("slow", {"seconds": 0.3})
            task_id = raw["taskId"]
            before = len(upstream_calls(recorder, "tasks/get"))
            head, upstream_part, kid, mac = task_id.split(".")
            forged = [
                f"{head}.{upstream_part}x.{kid}.{mac}",  # another upstream id, same mac
                f"{head}.{upstream_part}.{kid}.{mac[:-2]}AA",  # an edited mac
                f"{head}.{upstream_part}.nokey.{mac}",  # a key the proxy does not hold
                "t2.not-base64!.k.m",
                "an-upstream-id",
            ]
            for bad in forged:
                with pytest.raises(rondo.McpError, match="Task not found") as caught:
                    await alice.task(bad).get()
                assert caught.value.code == -32602
            for method in ("get", "cancel"):  # bob holds alice's id: it is unknown to him
                with pytest.raises(rondo.McpError, match="Task not found"):
                    await getattr(bob.task(task_id), method)()
            with pytest.raises(rondo.McpError, match="Task not found"):
                await bob.task(task_id).update({"x": {}})
            assert len(upstream_calls(recorder, "tasks/get")) == before  # none went upstream
            assert (await alice.task(task_id).get())["status"] in ("working", "completed")

    asyncio.run(go())


def test_cancel_is_relayed_and_undeclared_clients_get_sync_calls_and_minus_32021(
        proxied: Any) -> None:
    front_url, recorder = proxied

    async def go() -> None:
        async with Client(front_url, name="alice", tasks=True) as client:
            raw = await client.call_raw("slow", {"seconds": 30})
            handle = client.task(raw["taskId"])
            await handle.cancel()
            with pytest.raises(TaskWasCancelled, match="was cancelled"):
                await handle.wait_raw(answer=False)
            assert handle.last["status"] == "cancelled"
            # A tool the upstream never runs as a task answers as usual to a tasks client.
            assert (await client.call_raw("plain"))["content"][0]["text"] == "plain"
        async with Client(front_url, name="alice") as plain:
            assert (await plain.call_tool("slow", {"seconds": 0.01})).text == "slept 0.01"
            with pytest.raises(rondo.McpError, match="requires|capabilit") as caught:
                await plain.request("tasks/get", {"taskId": raw["taskId"]})
            assert caught.value.code == -32021
        async with Client(front_url, name="alice", protocol="2025-11-25") as legacy:
            assert (await legacy.call_tool("slow", {"seconds": 0.01})).text == "slept 0.01"

    asyncio.run(go())
    cancels = upstream_calls(recorder, "tasks/cancel")
    assert len(cancels) == 1 and not cancels[0]["mcp-name"].startswith("t2.")
    deadline = time.monotonic() + 5  # the upstream's task itself was cancelled
    while "30" not in CANCELLED and time.monotonic() < deadline:
        time.sleep(0.02)
    assert "30" in CANCELLED


def test_any_proxy_with_the_keys_serves_a_task_another_proxy_returned() -> None:
    keys = [("k1", b"k" * 32)]
    recorder = Recorder(task_upstream().asgi())
    with served(recorder) as (url, _):
        first = rondo.proxy(url, state=StatePolicy(keys=keys, principal=by_name))
        second = rondo.proxy(url, state=StatePolicy(keys=keys, principal=by_name))
        other = rondo.proxy(url, state=StatePolicy(keys=[("k9", b"z" * 32)], principal=by_name))
        with served(first.asgi()) as (one, _), served(second.asgi()) as (two, _), \
                served(other.asgi()) as (three, _):

            async def go() -> None:
                async with Client(one, name="alice", tasks=True) as a, \
                        Client(two, name="alice", tasks=True) as b, \
                        Client(three, name="alice", tasks=True) as c:
                    raw = await a.call_raw("slow", {"seconds": 0.2})
                    handle = b.task(raw["taskId"])  # another process, the same keys
                    assert (await handle.wait()).text == "slept 0.2"
                    assert handle.last["taskId"] == raw["taskId"]
                    before = len(upstream_calls(recorder, "tasks/get"))
                    with pytest.raises(rondo.McpError, match="Task not found"):
                        await c.task(raw["taskId"]).get()  # a proxy without the keys
                    assert len(upstream_calls(recorder, "tasks/get")) == before

            asyncio.run(go())


def test_task_notifications_on_a_listen_stream_are_relayed_under_the_proxy_ids(
        proxied: Any) -> None:
    """A 2026-07-28 `subscriptions/listen` with a `taskIds` filter: the proxy follows the
    upstream's tasks on a stream of its own and passes on each `notifications/tasks` under the
    id as its client holds it; an id of another principal or an edited one is left out of the
    acknowledgement and nothing of it reaches that stream."""
    from tests.helpers.wire_schema import validate

    front_url, recorder = proxied

    async def go() -> None:
        async with Client(front_url, name="alice", tasks=True) as alice, \
                Client(front_url, name="bob", tasks=True) as bob:
            task_id = (await alice.call_raw("slow", {"seconds": 0.4}))["taskId"]
            head, upstream_part, kid, mac = task_id.split(".")
            edited = f"{head}.{upstream_part}.{kid}.{mac[:-2]}AA"
            before = len(upstream_calls(recorder, "subscriptions/listen"))
            async with bob.listen(task_ids=[task_id]) as theirs:
                assert theirs.acknowledged == {"taskIds": []}  # alice's id is unknown to bob
                # bob holds no id of the upstream's: no stream was opened upstream for him
                assert len(upstream_calls(recorder, "subscriptions/listen")) == before
                async with alice.listen(task_ids=[task_id, edited, "nope"]) as mine:
                    assert mine.acknowledged == {"taskIds": [task_id]}
                    assert len(upstream_calls(recorder, "subscriptions/listen")) == before + 1
                    statuses: list[str] = []
                    deadline = asyncio.get_running_loop().time() + 10
                    while "completed" not in statuses:
                        note = await asyncio.wait_for(
                            mine.__anext__(), deadline - asyncio.get_running_loop().time())
                        validate({"jsonrpc": "2.0", **note}, era="2026-07-28")
                        assert note["method"] == "notifications/tasks"
                        params = note["params"]
                        assert params["taskId"] == task_id
                        assert params["_meta"]["io.modelcontextprotocol/subscriptionId"] == mine.id
                        statuses.append(params["status"])
                    assert statuses[0] == "working"
                    assert params["result"]["content"][0]["text"] == "slept 0.4"
                assert theirs._queue.empty()  # bob's stream heard nothing of alice's task

    asyncio.run(go())


def test_a_listen_stream_naming_more_than_100_task_ids_is_refused(proxied: Any) -> None:
    """docs/gateway.md: at most 100 ids a listen stream, as rondo's own tasks: -32602, and
    nothing opened upstream."""
    front_url, recorder = proxied

    async def go() -> None:
        async with Client(front_url, name="alice", tasks=True) as alice:
            task_id = (await alice.call_raw("slow", {"seconds": 0.1}))["taskId"]
            before = len(upstream_calls(recorder, "subscriptions/listen"))
            with pytest.raises(rondo.McpError, match="at most 100 task ids") as caught:
                async with alice.listen(task_ids=[task_id] * 50 + [f"x{n}" for n in range(51)]):
                    pass
            assert caught.value.code == -32602
            assert len(upstream_calls(recorder, "subscriptions/listen")) == before
            async with alice.listen(task_ids=[task_id] + [f"x{n}" for n in range(99)]) as sub:
                assert sub.acknowledged == {"taskIds": [task_id]}  # 100: served

    asyncio.run(go())
