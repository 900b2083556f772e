"""Events across a real fleet: three `rondo run --fleet --redis` workers and one Redis. A job
finished on one worker reaches an `events/stream` held on another and a webhook receiver
exactly once per event, with a signature that verifies."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from pathlib import Path

import httpx
import pytest

from tests.helpers import fleet_parts
from tests.helpers.helpers_core import ALL_CAPS, http_headers, http_messages, request
from tests.helpers.webhook_receiver import Receiver

pytestmark = pytest.mark.slow

APP = Path(__file__).resolve().parents[1] / "helpers" / "fleet_events_app.py"
SECRET = "whsec_" + base64.b64encode(b"fleet-secret-0123456789abcdef!!").decode()


@pytest.fixture(scope="module")
def workers():
    with fleet_parts.redis_fleet(APP) as started:
        yield started


def headers_for(message: dict) -> dict[str, str]:
    return {**http_headers(message), "authorization": "Bearer user-alice"}


async def call(client: httpx.AsyncClient, worker: fleet_parts.Worker, method: str, params: dict,
               rid: int = 1) -> dict:
    message = request(method, params, id=rid, caps=ALL_CAPS)
    response = await client.post(worker.url, json=message, headers=headers_for(message))
    assert response.status_code == 200, response.text
    (reply,) = http_messages(response, method)
    assert "error" not in reply, reply
    return reply["result"]


async def hold_stream(worker: fleet_parts.Worker, seen: list[dict], ready: asyncio.Event) -> None:
    message = request("events/stream", {"name": "job.done", "arguments": {"queue": "builds"},
                                        "cursor": None}, id=99, caps=ALL_CAPS)
    async with httpx.AsyncClient(timeout=None) as client, client.stream(
            "POST", worker.url, json=message, headers=headers_for(message)) as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                note = json.loads(line[5:])
                seen.append(note)
                if note.get("method") == "notifications/events/active":
                    ready.set()


async def until(predicate, what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def test_an_event_on_one_worker_reaches_a_stream_on_another_and_a_webhook_once(workers):
    w1, w2, w3 = workers

    async def go() -> None:
        receiver = await Receiver(SECRET).start()
        seen: list[dict] = []
        ready = asyncio.Event()
        stream = asyncio.create_task(hold_stream(w2, seen, ready))
        try:
            async with httpx.AsyncClient(timeout=20) as client:
                made = await call(client, w1, "events/subscribe", {
                    "name": "job.done", "arguments": {"queue": "builds"},
                    "delivery": {"mode": "webhook", "url": receiver.url, "secret": SECRET},
                    "cursor": None, "ttlMs": 60_000})
                await asyncio.wait_for(ready.wait(), 15)
                jobs = [f"j{n}" for n in range(10)]
                pids = set()
                for n, job in enumerate(jobs):
                    result = await call(client, w3 if n % 2 else w1, "tools/call",
                                        {"name": "finish", "arguments": {"job": job, "queue": "builds"}},
                                        rid=10 + n)
                    pids.add(result["content"][0]["text"])
                await call(client, w3, "tools/call", {"name": "finish", "arguments": {
                    "job": "other", "queue": "deploys"}}, rid=50)  # matches no subscription
            assert pids == {str(w1.proc.pid), str(w3.proc.pid)}

            def streamed() -> list[str]:
                return [n["params"]["data"]["job"] for n in seen
                        if n.get("method") == "notifications/events/event"]

            await until(lambda: len(streamed()) == len(jobs), "the stream on worker 2")
            assert streamed() == jobs  # in order, each once, none of the other queue
            await until(lambda: len({d["body"]["eventId"] for d in receiver.deliveries}) == len(jobs),
                        "every webhook delivery")
            async with httpx.AsyncClient(timeout=20) as client:  # a last event, to flush
                await call(client, w1, "tools/call", {"name": "finish", "arguments": {
                    "job": "last", "queue": "builds"}}, rid=60)
            await until(lambda: any(d["body"]["data"]["job"] == "last" for d in receiver.deliveries),
                        "the last delivery")
            delivered = [d["body"]["data"]["job"] for d in receiver.deliveries]
            assert sorted(delivered) == sorted([*jobs, "last"])  # each once: none repeated
            assert all(d["verified"] for d in receiver.deliveries)
            assert {d["headers"]["x-mcp-subscription-id"] for d in receiver.deliveries} == {made["id"]}
        finally:
            stream.cancel()
            await receiver.close()

    asyncio.run(go())
