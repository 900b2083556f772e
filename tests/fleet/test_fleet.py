"""A real fleet: three `rondo run` workers behind nginx (deploy/nginx, as shipped), one Redis.

Every response names the worker that produced it (fleet_app.py), so the test sees where each
round of a flow landed, through the public API only.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from tests.helpers import fleet_parts, redis_server
from tests.helpers.fleet_flows import answer, call, run_flows
from tests.helpers.helpers_core import (
    INVALID_PARAMS,
    SUB_ID,
    check,
    http_headers,
    http_messages,
    request,
    sse_events,
)

pytestmark = pytest.mark.slow

FLOWS = 500
CONCURRENCY = 40
KILL_AFTER = FLOWS // 3


def new_keys(key_id: str = "k1") -> str:
    return subprocess.run([sys.executable, "-m", "rondo.state", key_id], check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def redis_url():
    fleet_parts.need("redis-server")
    with redis_server.running() as url:
        yield url


@pytest.fixture(scope="module")
def fleet(redis_url):
    keys = new_keys()
    env = {"RONDO_STATE_KEYS": keys}
    workers = [fleet_parts.start_worker("--fleet", "--redis", redis_url, worker_id=f"w{n}", env=env)
               for n in (1, 2, 3)]
    try:
        for worker in workers:
            fleet_parts.wait_http(f"http://127.0.0.1:{worker.port}/healthz", worker.proc)
        with fleet_parts.nginx(workers) as url:
            yield {"url": url, "workers": workers, "keys": keys, "redis": redis_url}
    finally:
        for worker in workers:
            fleet_parts.stop(worker.proc)


def test_mrtr_flows_cross_workers_and_survive_a_sigkill(fleet):
    workers = fleet["workers"]
    ids = {w.worker_id for w in workers}
    pid_of = {w.worker_id: str(w.proc.pid) for w in workers}
    victim = workers[1]
    started = time.monotonic()
    results, killed_at = run_flows(fleet["url"], victim, flows=FLOWS, concurrency=CONCURRENCY,
                                   kill_after=KILL_AFTER, timeout=15)
    elapsed = time.monotonic() - started
    assert killed_at is not None and victim.proc.wait(5) == -signal.SIGKILL
    assert len(results) == FLOWS
    for n, (rounds, text) in enumerate(results):
        assert text.endswith(f"t{n} u{n} c{n}"), text  # every flow completed, with its answers
        assert set(rounds) <= ids
        assert text.startswith(f"worker {pid_of[rounds[-1]]}:")  # the header names the process
    crossing = sum(1 for rounds, _ in results if len(set(rounds)) > 1)
    assert crossing >= FLOWS // 2, f"only {crossing} flows had rounds on several workers"
    assert {w for rounds, _ in results for w in rounds} == ids
    late = [rounds for rounds, _ in results[KILL_AFTER + CONCURRENCY:]]
    assert late and all(victim.worker_id not in rounds for rounds in late)  # only live ones
    print(f"{FLOWS} flows x 3 rounds in {elapsed:.1f}s; {crossing} crossed workers")


def test_a_listen_stream_on_one_worker_hears_a_change_raised_on_another(fleet):
    a, b = fleet["workers"][0], fleet["workers"][2]
    listen = request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=7)

    async def main() -> list[dict]:
        seen: list[dict] = []
        async with httpx.AsyncClient(timeout=10) as client, client.stream(
                "POST", a.url, json=listen, headers=http_headers(listen)) as r:
            assert r.status_code == 200
            lines = r.aiter_lines()

            async def next_message() -> dict:
                data = []
                async for line in lines:
                    if line.startswith("data:"):
                        data.append(line[5:].strip())
                    elif not line and data:
                        return check(json.loads("".join(data)))
                raise AssertionError("stream ended")

            ack = await asyncio.wait_for(next_message(), 5)
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            seen.append(ack)
            touch = call("touch_tools", {}, 8)
            reply = await client.post(b.url, json=touch, headers=http_headers(touch))
            (done,) = http_messages(reply, "tools/call")
            assert done["result"]["content"][0]["text"] == str(b.proc.pid)
            seen.append(await asyncio.wait_for(next_message(), 5))
        return seen

    ack, note = asyncio.run(main())
    assert note["method"] == "notifications/tools/list_changed"
    assert note["params"]["_meta"][SUB_ID] == 7


def legacy_post(client: httpx.Client, url: str, message: dict, sid: str | None = None):
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if sid:
        headers["mcp-session-id"] = sid
        headers["mcp-protocol-version"] = "2025-11-25"
    return client.post(url, json=message, headers=headers)


def legacy_session(client: httpx.Client, url: str) -> str:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "fleet-test", "version": "0"}}}
    response = legacy_post(client, url, init)
    assert response.status_code == 200, response.text
    sid = response.headers["mcp-session-id"]
    assert legacy_post(client, url, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                       sid).status_code == 202
    return sid


def legacy_whoami(client: httpx.Client, url: str, sid: str, rid: int) -> httpx.Response:
    return legacy_post(client, url, {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                     "params": {"name": "whoami", "arguments": {}}}, sid)


def _text(response: httpx.Response) -> str:
    if response.headers["content-type"].startswith("text/event-stream"):
        (message,) = sse_events(response.text)
    else:
        message = response.json()
    return message["result"]["content"][0]["text"]


def test_legacy_sessions_stay_on_their_worker_through_nginx(fleet):
    live = [w for w in fleet["workers"] if w.proc.poll() is None]
    by_pid = {str(w.proc.pid): w for w in live}
    owners = set()
    with httpx.Client(timeout=10) as client:
        for _ in range(6):  # initialize is round robin: sessions open on several workers
            sid = legacy_session(client, fleet["url"])
            answers = {_text(legacy_whoami(client, fleet["url"], sid, n)) for n in range(2, 10)}
            assert len(answers) == 1, answers  # every request of the session: one worker
            (pid,) = answers
            owner = by_pid[pid]
            assert sid.startswith(f"{owner.worker_id}.")
            owners.add(pid)
            # The same session sent straight to another worker: the spec's 404, at once.
            other = next(w for w in live if w is not owner)
            with httpx.Client(timeout=5) as direct:  # a hang guard, not a stopwatch
                wrong = legacy_whoami(direct, other.url, sid, 99)
            assert wrong.status_code == 404
            assert wrong.json()["error"]["code"] == -32001
        assert len(owners) >= 2


def test_a_legacy_session_on_one_worker_hears_a_change_raised_on_another(fleet):
    a, b = fleet["workers"][0], fleet["workers"][2]
    with httpx.Client(timeout=10) as client:
        sid = legacy_session(client, a.url)
        headers = {"accept": "text/event-stream", "mcp-session-id": sid,
                   "mcp-protocol-version": "2025-11-25"}
        with client.stream("GET", a.url, headers=headers) as stream:
            assert stream.status_code == 200
            touch = call("touch_tools", {}, 9)
            assert client.post(b.url, json=touch, headers=http_headers(touch)).status_code == 200
            data: list[str] = []
            for line in stream.iter_lines():
                if line.startswith("data:") and line[5:].strip():
                    data.append(line[5:].strip())
                elif not line and data:
                    break  # the first event with a message (a priming event has none)
    note = json.loads("".join(data))
    assert note["method"] == "notifications/tools/list_changed"


def test_a_session_of_a_dead_worker_gets_404_through_nginx(fleet):
    dead = fleet["workers"][1]
    assert dead.proc.poll() is not None, "runs after the SIGKILL test"
    with httpx.Client(timeout=10) as client:
        response = legacy_whoami(client, fleet["url"], f"{dead.worker_id}.gone", 5)
        assert response.status_code == 404  # the client re-initializes, it does not hang
        response = legacy_whoami(client, fleet["url"], "unknown-session", 6)
        assert response.status_code == 404


def test_sse_passes_through_nginx_unbuffered(fleet):
    listen = request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=3)
    # The listen stream stays open: buffered by nginx, its acknowledgement would arrive only when
    # the stream ends, so the 10 s read timeout (a hang guard) would fail the test first.
    with httpx.Client(timeout=10) as client, client.stream(
            "POST", fleet["url"], json=listen, headers=http_headers(listen)) as response:
        acknowledged = next((line for line in response.iter_lines() if line.startswith("data:")), None)
    assert acknowledged is not None, "the stream ended without its acknowledgement"


def test_a_one_time_state_consumed_on_one_worker_is_refused_on_another(redis_url):
    env = {"RONDO_STATE_KEYS": new_keys(), "FLEET_ONCE": "1"}
    pair = [fleet_parts.start_worker("--fleet", "--redis", redis_url, env=env) for _ in range(2)]
    try:
        for worker in pair:
            fleet_parts.wait_http(f"http://127.0.0.1:{worker.port}/healthz", worker.proc)
        with httpx.Client(timeout=10) as client:
            def send(url: str, message: dict) -> dict:
                (reply,) = http_messages(client.post(url, json=message,
                                                     headers=http_headers(message)), "tools/call")
                return reply

            first = send(pair[0].url, call("interview", {"topic": "x"}, 1))["result"]
            retry = call("interview", {"topic": "x"}, 2, requestState=first["requestState"],
                         inputResponses=answer("name", "Ada"))
            used = send(pair[0].url, retry)
            assert used["result"]["resultType"] == "input_required"  # consumed on worker 1
            replay = send(pair[1].url, retry)
            assert replay["error"]["code"] == INVALID_PARAMS  # refused on worker 2
            fresh = send(pair[0].url, call("interview", {"topic": "x"}, 3))["result"]
            moved = send(pair[1].url, call("interview", {"topic": "x"}, 4,
                                           requestState=fresh["requestState"],
                                           inputResponses=answer("name", "Bo")))
            assert moved["result"]["resultType"] == "input_required"  # first use works anywhere
    finally:
        for worker in pair:
            fleet_parts.stop(worker.proc)


def test_rondo_keys_check_catches_a_worker_with_another_key(fleet):
    odd = fleet_parts.start_worker("--fleet", worker_id="odd",
                                   env={"RONDO_STATE_KEYS": new_keys("k1")})
    try:
        fleet_parts.wait_http(f"http://127.0.0.1:{odd.port}/healthz", odd.proc)
        live = [w.url for w in fleet["workers"] if w.proc.poll() is None]

        def check(*urls: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "rondo", "keys", "check", *urls],
                                  capture_output=True, text=True, timeout=30)

        good = check(*live)
        assert good.returncode == 0, good.stdout + good.stderr
        assert "ok: " in good.stdout
        bad = check(*live, odd.url)
        assert bad.returncode == 1
        (mismatch,) = [line for line in bad.stdout.splitlines() if line.startswith("MISMATCH")]
        assert odd.url in mismatch and "different keys" in mismatch
        secret = fleet["keys"].split(":", 1)[1]
        assert secret not in bad.stdout + bad.stderr
        # Through nginx the report is not served: the check is for the workers' own hosts.
        assert check(fleet["url"]).returncode == 2
    finally:
        fleet_parts.stop(odd.proc)


@pytest.mark.parametrize("flags", [["--workers", "2"], ["--fleet"]])
def test_a_fleet_without_keys_refuses_to_start(flags, free_port):
    env = {k: v for k, v in os.environ.items() if k != "RONDO_STATE_KEYS"}
    proc = subprocess.run([sys.executable, "-m", "rondo", "run", str(fleet_parts.APP), "--http",
                           str(free_port), *flags], capture_output=True, text=True, env=env,
                          timeout=30)
    assert proc.returncode == 2
    assert "refusing to start" in proc.stderr and "RONDO_STATE_KEYS" in proc.stderr
    assert "tool interview" in proc.stderr
    assert "serving" not in proc.stderr
