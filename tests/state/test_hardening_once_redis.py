"""Issue 37 item 13 on Redis: the shared one-time store has the memory store's quotas per client,
counted atomically in Redis so every worker sharing it sees the same counts."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from rondo.state import RedisReplayStore
from tests.helpers import redis_server
from tests.helpers.helpers_core import ALL_CAPS, Client
from tests.helpers.once_flows import ANSWER, anonymous_flows, first_round, once_server

pytestmark = pytest.mark.slow

_prefixes = iter(range(1_000_000))


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server.running() as url:
        yield url


def store_for(url: str, prefix: str | None = None, **limits: int) -> RedisReplayStore:
    """A store on its own key prefix, so each test starts from an empty store."""
    return RedisReplayStore(url=url, prefix=prefix or f"t{next(_prefixes)}:", **limits)


def finish(client: Client, first: dict[str, Any]) -> dict[str, Any]:
    return client.call("tools/call", {"name": "pick", "arguments": {}, "inputResponses": ANSWER,
                                      "requestState": first["result"]["requestState"]},
                       caps=ALL_CAPS)


def test_one_clients_finished_flows_fill_its_own_quota_on_redis(redis_url: str) -> None:
    # Before: RedisReplayStore had no quota at all (one client could fill Redis's memory).
    server = once_server(store_for(redis_url, max_per_principal=10, max_live_per_principal=4))
    alice, bob = Client(server, auth="alice"), Client(server, auth="bob")
    for _ in range(4):
        assert finish(alice, first_round(alice))["result"]["content"][0]["text"] == "picked red"
    refused = first_round(alice)["error"]
    assert refused["code"] == -32000
    assert refused["message"] == ("Server busy: too many one-time request states for this client "
                                  "(limit 4, max_live_per_principal); try again later")
    # Bob is untouched by Alice's flows, and a used token still cannot be replayed.
    first = first_round(bob)
    assert finish(bob, first)["result"]["content"][0]["text"] == "picked red"
    assert finish(bob, first)["error"]["code"] == -32602


def test_unopened_and_live_shares_and_the_whole_store_on_redis(redis_url: str) -> None:
    store = store_for(redis_url, max_entries=6, max_per_principal=2, max_live_per_principal=3)
    assert store.reserve("a1", 60, "alice") and store.reserve("a2", 60, "alice")
    assert not store.reserve("a3", 60, "alice")
    assert store.refusal("alice").message == (
        "Server busy: too many one-time request states for this client (limit 2, "
        "max_per_principal); try again later")
    assert store.consume("a1", 60) and not store.consume("a1", 60)  # opened: leaves the unopened share
    assert store.consume("a2", 60)
    assert store.reserve("a3", 60, "alice")
    assert not store.reserve("a4", 60, "alice")  # three places held: two used, one unopened
    assert "(limit 3, max_live_per_principal)" in store.refusal("alice").message
    # An anonymous client (None) and another principal have shares of their own.
    assert store.reserve("n1", 60, None) and store.reserve("b1", 60, "bob")
    # A token this store never reserved takes a place in the whole store while there is room...
    assert store.consume("foreign1", 60) and not store.consume("foreign1", 60)
    # ...and the whole store (6 places) is the last resort, named as such; it fails closed.
    assert not store.reserve("c1", 60, "carol")
    refusal = store.refusal("carol")
    assert refusal.scope == "server"
    assert "on this server (limit 6, max_entries)" in refusal.message
    assert "for this client" not in refusal.message
    assert not store.consume("foreign2", 60)
    assert store.consume("a3", 60)  # tokens already out always open


def test_the_quota_is_shared_by_every_worker_on_the_same_redis(redis_url: str) -> None:
    limits = {"max_per_principal": 10, "max_live_per_principal": 3}
    first = once_server(store_for(redis_url, "fleet:", **limits), "worker-1")
    second = once_server(store_for(redis_url, "fleet:", **limits), "worker-2")
    on_first, on_second = Client(first, auth="alice"), Client(second, auth="alice")
    for client in (on_first, on_second, on_first):
        assert finish(client, first_round(client))["result"]["content"][0]["text"] == "picked red"
    # Three places taken across both workers: the fourth seal is refused on either.
    for client in (on_first, on_second):
        refused = first_round(client)["error"]
        assert "for this client (limit 3, max_live_per_principal)" in refused["message"]
    bob = Client(second, auth="bob")
    assert "result" in first_round(bob)


def test_places_leave_the_quota_when_their_tokens_expire(redis_url: str) -> None:
    store = store_for(redis_url, max_per_principal=10, max_live_per_principal=2)
    assert store.reserve("long", 600, "alice")
    assert store.reserve("short", 0.2, "alice") and store.consume("short", 0.2)
    deadline = time.monotonic() + 10
    while not store.reserve("next", 600, "alice"):  # refused until "short" expires in Redis
        assert store.refusal("alice").scope == "client"
        assert time.monotonic() < deadline, "the 200 ms place never left alice's quota"
        time.sleep(0.02)
    # "long" still holds its place: the quota counts again, it was not simply ignored.
    assert not store.reserve("after", 600, "alice")
    assert store.consume("long", 600)


def test_anonymous_http_clients_have_a_quota_each_by_address_on_redis(redis_url: str) -> None:
    store = store_for(redis_url, max_per_principal=10, max_live_per_principal=2)
    one, two, three, other = anonymous_flows(store)
    assert one["result"]["content"][0]["text"] == two["result"]["content"][0]["text"] == "picked red"
    assert three["error"]["code"] == -32000
    assert "for this client (limit 2, max_live_per_principal)" in three["error"]["message"]
    assert other["result"]["content"][0]["text"] == "picked red"


def test_principals_are_not_written_to_redis_in_the_clear(redis_url: str) -> None:
    import redis

    store = store_for(redis_url, "clear:")
    assert store.reserve("x1", 60, "alice@example.com")
    keys = redis.Redis.from_url(redis_url).keys("clear:*")
    assert len(keys) == 4  # the token, alice's two shares, the whole store
    assert not any(b"alice" in key for key in keys)


def test_a_stalled_redis_fails_the_call_after_the_stores_timeout() -> None:
    # Before: a store made from a URL had redis-py's default, no read timeout at all, so a
    # stalled Redis held the worker's event loop for as long as the stall lasted.
    import redis

    with redis_server.running() as url:
        store = RedisReplayStore(url=url, timeout=0.5)
        assert store.reserve("warm", 60, "alice")  # connected before the stall
        pid = int(redis.Redis.from_url(url).info("server")["process_id"])
        os.kill(pid, signal.SIGSTOP)
        outcome: list[BaseException] = []
        try:
            worker = threading.Thread(target=lambda: _record(outcome, store.consume, "warm", 60))
            worker.start()
            worker.join(30)  # far above the 0.5 s timeout: only a missing timeout reaches it
            finished = not worker.is_alive()
        finally:
            os.kill(pid, signal.SIGCONT)
        worker.join(30)
        assert finished, "consume() was still waiting on the stalled Redis after 30 s"
        assert len(outcome) == 1 and isinstance(outcome[0], redis.TimeoutError)
    with pytest.raises(ValueError, match="timeout must be positive and finite"):
        RedisReplayStore(url="redis://127.0.0.1:1/0", timeout=0)
    with pytest.raises(ValueError, match="max_live_per_principal must be at least 1"):
        RedisReplayStore(url="redis://127.0.0.1:1/0", max_live_per_principal=0)


def _record(outcome: list[BaseException], call: Any, *args: Any) -> None:
    try:
        call(*args)
    except BaseException as exc:  # noqa: BLE001 - the test inspects it
        outcome.append(exc)
