"""A fleet of proxies: three `rondo proxy` workers with shared state keys behind nginx
(deploy/nginx, as shipped) in front of one upstream; 300 three-round flows relayed with their
rounds landing on different workers, and one worker SIGKILLed mid-run: every flow completes.

The proxies keep nothing between rounds (the upstream's state rides sealed inside the proxy's
own), so any worker with the keys serves any round. Each proxy worker calls the upstream with
its own `X-Proxy-Worker` header (its static upstream credential slot), so the upstream records
which worker relayed each round; nginx's `rondo-worker` response header says the same.
"""

from __future__ import annotations

import contextvars
import os
import signal
import subprocess
import sys
import time
from typing import Any

import pytest

import rondo
from rondo import elicit
from tests.helpers import fleet_parts
from tests.helpers.fleet_flows import Flow, run_flows
from tests.helpers.gateway_upstream import served

pytestmark = pytest.mark.slow

FLOWS = 300
CONCURRENCY = 30
KILL_AFTER = FLOWS // 3
TEXT = {"type": "object", "properties": {"v": {"type": "string"}}, "required": ["v"]}
_RELAYER: contextvars.ContextVar[str | None] = contextvars.ContextVar("relayer", default=None)
SEEN: list[tuple[str, int, str | None]] = []  # (topic, round, the proxy worker that relayed it)


def interview_upstream() -> Any:
    up = rondo.Server("fleet-upstream")

    @up.tool
    def interview(topic: str, ctx: rondo.Context) -> str:
        """Three rounds: two questions, then the answer."""
        given = ctx.input_responses or {}
        SEEN.append((topic, 2 if "color" in given else 1 if "name" in given else 0,
                     _RELAYER.get()))
        name = ctx.ask("name", elicit.form("Your name?", TEXT))
        color = ctx.ask("color", elicit.form(f"{name.content['v']}'s color?", TEXT))
        return f"{topic} {name.content['v']} {color.content['v']}"

    app = up.asgi()

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            worker = dict(scope["headers"]).get(b"x-proxy-worker")
            _RELAYER.set(None if worker is None else worker.decode())
        await app(scope, receive, send)

    return recording


def new_keys() -> str:
    return subprocess.run([sys.executable, "-m", "rondo.state", "k1"], check=True,
                          capture_output=True, text=True).stdout.strip()


def start_proxy(upstream: str, worker_id: str, keys: str) -> fleet_parts.Worker:
    port = fleet_parts.free_port()
    rondo_bin = os.path.join(os.path.dirname(sys.executable), "rondo")
    proc = subprocess.Popen(
        [rondo_bin, "proxy", upstream, "--http", f"127.0.0.1:{port}", "--worker-id", worker_id,
         "--header", f"X-Proxy-Worker: {worker_id}", "--timeout", "10"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "RONDO_STATE_KEYS": keys})
    return fleet_parts.Worker(port, proc, worker_id)


def test_300_relayed_flows_cross_proxy_workers_and_survive_a_sigkill() -> None:
    keys = new_keys()
    SEEN.clear()
    with served(interview_upstream()) as (upstream, _):
        workers = [start_proxy(upstream, f"w{n}", keys) for n in (1, 2, 3)]
        try:
            for worker in workers:
                fleet_parts.wait_http(f"http://127.0.0.1:{worker.port}/healthz", worker.proc)
            with fleet_parts.nginx(workers) as url:
                results, killed = relayed_flows(url, workers[1])
        finally:
            for worker in workers:
                fleet_parts.stop(worker.proc)
    victim = workers[1]
    assert killed and victim.proc.returncode == -signal.SIGKILL
    ids = {w.worker_id for w in workers}
    assert len(results) == FLOWS
    for n, (rounds, text) in enumerate(results):
        assert text == f"t{n} u{n} c{n}", text  # every flow completed, with its own answers
        assert set(rounds) <= ids
    crossing = sum(1 for rounds, _ in results if len(set(rounds)) > 1)
    assert crossing >= FLOWS // 2, f"only {crossing} flows had rounds on several workers"
    assert {w for rounds, _ in results for w in rounds} == ids
    late = [rounds for rounds, _ in results[KILL_AFTER + CONCURRENCY:]]
    assert late and all(victim.worker_id not in rounds for rounds in late)
    # The upstream saw each round relayed by the worker nginx named, with the proxy's own header.
    relayers = {(topic, n): who for topic, n, who in SEEN}
    for n, (rounds, _) in enumerate(results):
        assert [relayers.get((f"t{n}", k)) for k in range(3)] == rounds


def relayed_flows(url: str, victim: fleet_parts.Worker) -> tuple[list[Flow], bool]:
    started = time.monotonic()
    results, killed_at = run_flows(url, victim, flows=FLOWS, concurrency=CONCURRENCY,
                                   kill_after=KILL_AFTER, timeout=20)
    victim.proc.wait(5)
    print(f"{FLOWS} relayed flows x 3 rounds in {time.monotonic() - started:.1f}s")
    return results, killed_at is not None
