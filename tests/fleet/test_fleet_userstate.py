"""Per-user state across a real fleet: three `rondo run --fleet --redis` workers, one Redis.
Requests go to each worker's own port, so which worker served what is known, not hoped for."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.helpers import fleet_parts
from tests.helpers.helpers_core import ALL_CAPS, http_headers, http_messages, request

pytestmark = pytest.mark.slow

APP = Path(__file__).resolve().parents[1] / "helpers" / "fleet_userstate_app.py"


@pytest.fixture(scope="module")
def workers():
    with fleet_parts.redis_fleet(APP) as started:
        yield started


async def tool(client: httpx.AsyncClient, worker: fleet_parts.Worker, user: str, name: str,
               rid: int = 1, **arguments: str) -> tuple[str, str]:
    message = request("tools/call", {"name": name, "arguments": arguments}, id=rid, caps=ALL_CAPS)
    headers = {**http_headers(message), "authorization": f"Bearer user-{user}"}
    response = await client.post(worker.url, json=message, headers=headers)
    assert response.status_code == 200, response.text
    (reply,) = http_messages(response, "tools/call")
    result = reply["result"]
    assert "isError" not in result, result
    pid, _, value = result["content"][0]["text"].partition(" ")
    return pid, value


def test_a_value_written_on_one_worker_is_read_on_another(workers):
    async def go() -> None:
        async with httpx.AsyncClient(timeout=10) as client:
            w1, w2, w3 = workers
            pid1, _ = await tool(client, w1, "alice", "put", key="draft", value="chapter 1")
            pid2, seen = await tool(client, w2, "alice", "read", key="draft")
            assert pid1 != pid2 and pid1 == str(w1.proc.pid) and pid2 == str(w2.proc.pid)
            assert seen == "chapter 1"
            assert (await tool(client, w3, "bob", "read", key="draft"))[1] == "<none>"
    asyncio.run(go())


def test_fifty_concurrent_takes_across_three_workers_take_once(workers):
    async def go() -> None:
        limits = httpx.Limits(max_connections=60)
        async with httpx.AsyncClient(timeout=20, limits=limits) as client:
            await tool(client, workers[0], "carol", "put", key="coupon", value="SAVE10")
            results = await asyncio.gather(*(
                tool(client, workers[i % 3], "carol", "take", rid=i, key="coupon")
                for i in range(50)))
            values = sorted(value for _, value in results)
            assert values == ["<gone>"] * 49 + ["SAVE10"]
            pids = {pid for pid, _ in results}
            assert pids == {str(w.proc.pid) for w in workers}  # all three took part
    asyncio.run(go())


def test_a_memory_store_with_three_workers_is_refused_at_start_up():
    done = subprocess.run(
        [sys.executable, "-m", "rondo", "run", str(APP), "--http", "127.0.0.1:0", "--workers", "3"],
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "per-user state store (MemoryStore) lives in one process" in done.stderr
    assert "serving" not in done.stderr
