"""A fleet: two rondo HTTP servers sharing state keys and a Redis task store (a real
redis-server on loopback). A task made on one is polled, answered and cancelled through the
other; a task whose worker is killed fails once its lease lapses."""

from __future__ import annotations

import asyncio
import base64
import os
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

import rondo  # noqa: E402
from rondo.client import Client, ElicitRequest, ElicitResult  # noqa: E402
from rondo.tasks import RedisTaskStore, TaskHandle  # noqa: E402
from tests.helpers import redis_server  # noqa: E402
from tests.helpers.fleet_parts import node_pair

pytestmark = pytest.mark.slow

APP = textwrap.dedent(
    '''
    import asyncio
    import os

    import rondo
    from rondo import elicit
    from rondo.tasks import RedisTaskStore, Tasks

    server = rondo.Server("fleet")
    server.extension(Tasks(RedisTaskStore(os.environ["FLEET_REDIS"]), lease=1.0, poll_interval_ms=100))


    def ask(field, kind="string"):
        return elicit.form(f"{field}?", {"type": "object", "properties": {field: {"type": kind}},
                                         "required": [field]})


    @server.tool(task="required")
    async def deploy(service: str, ctx: rondo.Context) -> str:
        """Asks who approves (before the task), then asks to go on halfway (in it)."""
        who = (await ctx.ask("approver", ask("approver"))).content["approver"]
        await ctx.start_task(f"deploying {service} for {who} on {os.environ['FLEET_NODE']}")
        await asyncio.sleep(0.2)
        go = (await ctx.ask("go", ask("go", "boolean"))).content["go"]
        return f"{service}: {'deployed' if go else 'stopped'} by {who} on {os.environ['FLEET_NODE']}"


    @server.tool(task="required")
    async def forever(ctx: rondo.Context) -> str:
        await ctx.start_task(f"running on {os.environ['FLEET_NODE']}")
        await asyncio.sleep(3600)
        return "never"
    '''
)


@pytest.fixture(scope="module")
def redis_url():
    with redis_server.running() as url:
        yield url


@pytest.fixture
def fleet(redis_url, tmp_path):
    app = tmp_path / "fleet_app.py"
    app.write_text(APP)
    secret = base64.urlsafe_b64encode(b"t" * 32).decode().rstrip("=")
    env = {**os.environ, "FLEET_REDIS": redis_url, "RONDO_STATE_KEYS": f"fleet1:{secret}"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(rondo.__file__).parents[1]),
                                                      env.get("PYTHONPATH")]))
    with node_pair(app, env, "FLEET_NODE") as nodes:
        yield nodes


def approve(request: ElicitRequest) -> Any:
    field = next(iter((request.requested_schema or {})["properties"]))
    return ElicitResult("accept", {field: True if field == "go" else "Lin"})


def test_a_task_made_on_one_node_is_driven_through_the_other(fleet) -> None:
    a, b = fleet

    async def go() -> None:
        async with Client(a.url, on_elicit=approve, tasks=True) as on_a, \
                Client(b.url, on_elicit=approve, tasks=True) as on_b:
            handle = await on_a.start_tool("deploy", {"service": "api"})
            assert isinstance(handle, TaskHandle)
            assert handle.last["statusMessage"] == "deploying api for Lin on A"
            remote = on_b.task(handle.task_id)
            assert (await remote.get())["taskId"] == handle.task_id  # durable: B sees it at once
            async with asyncio.timeout(10):
                while (task := await remote.get())["status"] != "input_required":
                    await asyncio.sleep(0.05)
            assert list(task["inputRequests"]) == ["go"]
            await remote.update({"go": {"action": "accept", "content": {"go": True}}})  # via B
            result = await remote.wait_raw()  # the result as the server sent it
            assert result["content"][0]["text"] == "api: deployed by Lin on A"  # ran on A
            # Cancel through B a task running on A: A's worker sees it.
            other = await on_a.start_tool("forever")
            assert isinstance(other, TaskHandle)
            await on_b.task(other.task_id).cancel()
            async with asyncio.timeout(10):
                while (await other.get())["status"] != "cancelled":
                    await asyncio.sleep(0.05)
            # The MRTR round on A, its answer (sealed state and all) to B, which makes the task.
            pending = await on_a.call_tool("deploy", {"service": "db"}, manual=True)
            assert isinstance(pending, rondo.client.PendingCall)
            assert (await on_b.resume(pending)).text == "db: deployed by Lin on B"

    asyncio.run(go())


def test_the_redis_store_is_atomic_and_expires(redis_url) -> None:
    from rondo.tasks import TaskRecord

    async def go() -> None:
        store = RedisTaskStore(redis_url, prefix="t-unit:")
        now = time.time()
        await store.create(TaskRecord(id="r1", principal=None, created=now, updated=now,
                                      ttl_ms=60_000, poll_ms=100))
        with pytest.raises(rondo.McpError, match="^task id collision$") as collision:
            await store.create(TaskRecord(id="r1", principal=None, created=now, updated=now,
                                          ttl_ms=60_000, poll_ms=100))
        assert collision.value.code == -32603

        def add(key: str) -> Any:
            def change(rec: TaskRecord) -> bool:
                rec.used.append(key)
                return True
            return change

        # Fifty writers at once on two connections' worth of clients: no write is lost.
        other = RedisTaskStore(redis_url, prefix="t-unit:")
        await asyncio.gather(*(s.modify("r1", add(f"k{i}")) for i, s in
                               ((i, store if i % 2 else other) for i in range(50))))
        record = await store.get("r1")
        assert record is not None and sorted(record.used) == sorted(f"k{i}" for i in range(50))
        assert await store.modify("absent", add("x")) is None and await store.get("absent") is None
        # Expiry without the wall clock racing the test: one record well inside its ttlMs, one
        # already past it (its Redis key still held for the store's grace period).
        now = time.time()
        await store.create(TaskRecord(id="fresh", principal=None, created=now, updated=now,
                                      ttl_ms=3_600_000, poll_ms=100))
        await store.create(TaskRecord(id="short", principal=None, created=now - 10, updated=now - 10,
                                      ttl_ms=1_000, poll_ms=100))
        assert await store.get("fresh") is not None and await other.get("fresh") is not None
        assert await store.get("short") is None  # past its ttlMs: gone for every replica
        assert await other.get("short") is None
        await store.aclose()
        await other.aclose()

    asyncio.run(go())


def test_a_dead_workers_task_fails_visibly_after_its_lease(fleet, redis_url) -> None:
    a, b = fleet

    async def go() -> None:
        async with Client(a.url, tasks=True) as on_a:
            handle = await on_a.start_tool("forever")
            assert isinstance(handle, TaskHandle)
        a.kill()
        async with Client(b.url, tasks=True) as on_b:
            remote = on_b.task(handle.task_id)
            assert (await remote.get())["status"] == "working"  # lease still running
            async with asyncio.timeout(10):
                while (task := await remote.get())["status"] == "working":
                    await asyncio.sleep(0.1)
            assert task["status"] == "failed" and task["error"]["code"] == -32603
            assert "lease" in task["error"]["message"]
        store = RedisTaskStore(redis_url)
        record = await store.get(handle.task_id)
        assert record is not None and record.status == "failed"
        await store.aclose()

    asyncio.run(go())
