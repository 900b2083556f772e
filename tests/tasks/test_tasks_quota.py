"""Issue 37 item 6: one client cannot take every task slot. Each client (the principal, or an
anonymous request's network peer) has its own quota of unfinished tasks; the store's global cap
is the last resort; both refusals are -32000 naming the limit."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import rondo  # noqa: E402
from rondo.tasks import MemoryTaskStore, Tasks  # noqa: E402
from tests.helpers.helpers_core import http_headers, request  # noqa: E402
from tests.helpers.tasks_helpers import WITH_TASKS, Peer, accept, form  # noqa: E402

BUSY = -32000


def quota_server(store: MemoryTaskStore) -> rondo.Server:
    server = rondo.Server("quota")
    # The principal is the test's `auth` value (a trusted transport would set it).
    server.extension(Tasks(store=store, principal=lambda ctx: ctx.auth))

    @server.tool(task="optional")
    async def ask_name(ctx: rondo.Context) -> str:
        """Starts a task that waits for a name."""
        await ctx.start_task()
        name = (await ctx.ask("name", form("name"))).content["name"]
        return f"hello {name}"

    return server


async def start(peer: Peer) -> dict[str, Any]:
    response = await peer.call("tools/call", {"name": "ask_name", "arguments": {}})
    return response.get("result") or {"error": response["error"]}


def test_one_principal_filling_its_quota_leaves_room_for_others() -> None:
    # Before: alice's unfinished tasks took every slot of max_tasks and bob got -32603.
    store = MemoryTaskStore(max_tasks=10, max_per_client=3)
    server = quota_server(store)

    async def main() -> None:
        alice, bob = Peer(server, auth="alice"), Peer(server, auth="bob")
        mine = [await start(alice) for _ in range(3)]
        assert all(task["resultType"] == "task" for task in mine)
        refused = (await start(alice))["error"]
        assert refused["code"] == BUSY
        assert "for this client (limit 3, max_per_client)" in refused["message"]
        assert (await start(bob))["resultType"] == "task"  # bob is not affected
        # A finished task frees its place.
        first = mine[0]["taskId"]
        await alice.until(first, "input_required")
        await alice.result("tasks/update", {"taskId": first, "inputResponses": {"name": accept(name="a")}})
        await alice.until(first)
        assert (await start(alice))["resultType"] == "task"

    asyncio.run(main())


def test_the_global_cap_is_the_last_resort_and_says_so() -> None:
    store = MemoryTaskStore(max_tasks=4, max_per_client=3)
    server = quota_server(store)

    async def main() -> None:
        alice, bob, carol = (Peer(server, auth=who) for who in ("alice", "bob", "carol"))
        for _ in range(3):
            assert (await start(alice))["resultType"] == "task"
        assert (await start(bob))["resultType"] == "task"
        refused = (await start(carol))["error"]
        assert refused["code"] == BUSY
        assert "on this server (limit 4, max_tasks)" in refused["message"]

    asyncio.run(main())
    with pytest.raises(ValueError, match="max_per_client"):
        MemoryTaskStore(max_per_client=0)


def test_anonymous_http_clients_count_by_their_address() -> None:
    import httpx

    store = MemoryTaskStore(max_tasks=100, max_per_client=2)
    server = rondo.Server("anon")
    server.extension(Tasks(store=store))

    @server.tool(task="optional")
    async def ask_name(ctx: rondo.Context) -> str:
        """Starts a task that waits for a name."""
        await ctx.start_task()
        return (await ctx.ask("name", form("name"))).content["name"]

    app = server.asgi()
    message = request("tools/call", {"name": "ask_name", "arguments": {}}, caps=WITH_TASKS)

    async def call(address: str) -> dict[str, Any]:
        transport = httpx.ASGITransport(app=app, client=(address, 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            response = await http.post("/mcp", json=message, headers=http_headers(message))
            return response.json()

    async def main() -> list[dict[str, Any]]:
        return [await call("10.0.0.1"), await call("10.0.0.1"), await call("10.0.0.1"),
                await call("10.0.0.2")]

    first, second, third, other = asyncio.run(main())
    assert first["result"]["resultType"] == "task" and second["result"]["resultType"] == "task"
    assert third["error"]["code"] == BUSY and "for this client" in third["error"]["message"]
    assert other["result"]["resultType"] == "task"  # another address: its own quota


@pytest.mark.slow
def test_the_redis_store_keeps_a_quota_per_client() -> None:
    import time

    from rondo.tasks import RedisTaskStore, TaskRecord
    from tests.helpers import redis_server

    def record(task_id: str, client: str) -> TaskRecord:
        now = time.time()
        return TaskRecord(id=task_id, principal=None, created=now, updated=now, ttl_ms=60_000,
                          poll_ms=100, client=client)

    def finish(rec: TaskRecord) -> bool:
        rec.status = "completed"
        return True

    async def main(url: str) -> None:
        store = RedisTaskStore(url, prefix="quota:", max_per_client=2)
        other_replica = RedisTaskStore(url, prefix="quota:", max_per_client=2)
        try:
            await store.create(record("a1", "alice"))
            await other_replica.create(record("a2", "alice"))  # the quota is the fleet's
            with pytest.raises(rondo.McpError, match=r"for this client \(limit 2, max_per_client\)") as refused:
                await store.create(record("a3", "alice"))
            assert refused.value.code == BUSY
            await store.create(record("b1", "bob"))
            await other_replica.modify("a1", finish)  # a finished task frees its place
            await store.create(record("a3", "alice"))
        finally:
            await store.aclose()
            await other_replica.aclose()

    with redis_server.running() as url:
        asyncio.run(main(url))
