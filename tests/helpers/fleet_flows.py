"""The three-round `interview` flow fleet tests drive through a load balancer: a tool that asks
for a name, then a colour, then answers (fleet_app.py, the gateway fleet's upstream). Each round
is posted as a client would, resent on a dead worker; `run_flows` runs many at once and
SIGKILLs one worker part-way through."""

from __future__ import annotations

import asyncio
import signal
import time
from typing import Any

import httpx

from tests.helpers.fleet_parts import Worker
from tests.helpers.helpers_core import ALL_CAPS, http_headers, http_messages, request

Flow = tuple[list[str], str]  # the worker of each round, the final text


def call(name: str, arguments: dict[str, Any], rid: int, **extra: Any) -> dict[str, Any]:
    return request("tools/call", {"name": name, "arguments": arguments, **extra}, id=rid,
                   caps=ALL_CAPS)


def answer(key: str, value: str) -> dict[str, Any]:
    return {key: {"action": "accept", "content": {"v": value}}}


async def post(client: httpx.AsyncClient, url: str, message: dict[str, Any]
               ) -> tuple[dict[str, Any], str]:
    """One round, resent on a dead worker (connection error or 502 from nginx) as a client
    would: a round is a plain retry of the same request, which any live worker serves.
    (the answer, the `rondo-worker` header nginx adds)"""
    for attempt in range(6):
        try:
            response = await client.post(url, json=message, headers=http_headers(message))
        except httpx.TransportError:
            await asyncio.sleep(0.05 * (attempt + 1))
            continue
        if response.status_code in (502, 503, 504):
            await asyncio.sleep(0.05 * (attempt + 1))
            continue
        (reply,) = http_messages(response, "tools/call")
        return reply, response.headers["rondo-worker"]
    raise AssertionError(f"no live worker answered {message['id']}")


async def interview(client: httpx.AsyncClient, url: str, n: int) -> Flow:
    """Flow `n`: topic t{n}, name u{n}, colour c{n}, request ids n*10+1 to n*10+3."""
    topic = f"t{n}"
    first, w1 = await post(client, url, call("interview", {"topic": topic}, n * 10 + 1))
    first = first["result"]
    assert first["resultType"] == "input_required" and set(first["inputRequests"]) == {"name"}
    second, w2 = await post(client, url, call(
        "interview", {"topic": topic}, n * 10 + 2, requestState=first["requestState"],
        inputResponses=answer("name", f"u{n}")))
    second = second["result"]
    assert second["resultType"] == "input_required" and set(second["inputRequests"]) == {"color"}
    third, w3 = await post(client, url, call(
        "interview", {"topic": topic}, n * 10 + 3, requestState=second["requestState"],
        inputResponses=answer("color", f"c{n}")))
    return [w1, w2, w3], third["result"]["content"][0]["text"]


def run_flows(url: str, victim: Worker, *, flows: int, concurrency: int, kill_after: int,
              timeout: float) -> tuple[list[Flow], float | None]:
    """`flows` interviews, `concurrency` at a time; when `kill_after` have completed, the
    victim is SIGKILLed while others are in flight. (every flow in order, when the kill was)"""
    done = 0
    killed_at: float | None = None

    async def main() -> list[Flow]:
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        gate = asyncio.Semaphore(concurrency)
        async with httpx.AsyncClient(timeout=timeout, limits=limits) as client:
            async def one(n: int) -> Flow:
                nonlocal done, killed_at
                async with gate:
                    out = await interview(client, url, n)
                done += 1
                if done == kill_after:
                    victim.proc.send_signal(signal.SIGKILL)  # mid-run: other flows in flight
                    killed_at = time.monotonic()
                return out
            return await asyncio.gather(*(one(n) for n in range(flows)))

    return asyncio.run(main()), killed_at
