"""One-time tokens: the store protocol, the in-memory store, Redis, and a fleet sharing Redis."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import re
import textwrap
import threading
import time
import types
from pathlib import Path
from typing import Any

import pytest

import rondo.state as state
from rondo.server.context import Context
from rondo.wire.errors import McpError
from tests.helpers import components, redis_server
from tests.helpers.fleet_parts import node_pair

# The one answer every refused requestState gets, whatever the reason (logged, never sent).
REJECTED = f"^{re.escape(state.REJECTED_MESSAGE)}$"

SECRET = b"r" * 32
PARAMS = {"name": "pay", "arguments": {"amount": 10}}


def ctx_for(params=None):
    return Context(types.SimpleNamespace(name="shop"), request_method="tools/call",
                   request_params=PARAMS if params is None else params)


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def once_token(**kw) -> str:
    return state.seal({"order": 1}, ctx_for(), secret=SECRET, principal=None, once=True, **kw)


def open_with(store, token, **kw):
    return state.open(token, ctx_for(), secret=SECRET, principal=None, replay_store=store, **kw)


# -- in-process memory store ------------------------------------------------------------------


def test_memory_store_consumes_once():
    store = state.MemoryReplayStore()
    assert store.consume("a", 10)
    assert not store.consume("a", 10)
    assert store.consume("b", 10)
    assert len(store) == 2


def test_memory_store_forgets_entries_after_their_ttl():
    clock = Clock()
    store = state.MemoryReplayStore(clock=clock)
    assert store.consume("a", 10)
    clock.now += 9.9
    assert not store.consume("a", 10)
    clock.now += 0.2
    assert len(store) == 0
    assert store.consume("a", 10)


def test_memory_store_is_bounded_and_fails_closed_when_full(caplog):
    clock = Clock()
    store = state.MemoryReplayStore(max_entries=3, clock=clock)
    assert all(store.consume(f"t{i}", 10 + i) for i in range(3))
    assert not store.consume("t3", 10)  # full of live entries: refuse, never forget one early
    assert any("full" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert not store.consume("t0", 10)
    clock.now += 10.5  # t0 expires, making room
    assert store.consume("t3", 10)
    assert len(store) == 3


def test_memory_store_is_safe_across_threads():
    store = state.MemoryReplayStore()
    results: list[bool] = []
    barrier = threading.Barrier(8)

    def worker() -> None:
        barrier.wait()
        results.append(store.consume("same", 30))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 7 + [True]


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [({"max_entries": 0}, ValueError, "max_entries must be at least 1"),
     ({"max_entries": 1.5}, TypeError, "max_entries must be an int"),
     ({"max_entries": True}, TypeError, "max_entries must be an int"),
     ({"clock": "now"}, TypeError, "clock must be callable")],
)
def test_memory_store_configuration_errors(kwargs, error, needle):
    with pytest.raises(error, match=needle):
        state.MemoryReplayStore(**kwargs)


def test_a_once_token_opens_once(caplog):
    caplog.set_level(logging.DEBUG, logger="rondo.state")
    store = state.MemoryReplayStore()
    token = once_token()
    assert open_with(store, token) == {"order": 1}
    with pytest.raises(McpError, match=REJECTED) as info:
        open_with(store, token)
    assert info.value.to_error() == {"code": -32602, "message": state.REJECTED_MESSAGE}
    assert "already used" in caplog.records[-1].getMessage()


def test_once_tokens_carry_an_id_and_ordinary_tokens_do_not():
    def claims(token: str) -> dict[str, Any]:
        part = token.split(".")[2]
        return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))

    assert len(claims(once_token())["j"]) == 22
    plain = state.seal(1, ctx_for(), secret=SECRET, principal=None)
    assert "j" not in claims(plain)

    class Untouchable:
        def consume(self, token_id: str, ttl: float) -> bool:
            raise AssertionError("only one-time tokens reach the store")

    for _ in range(3):
        assert open_with(Untouchable(), plain) == 1


def test_the_default_store_of_the_functional_api_is_shared():
    token = once_token()
    assert state.open(token, ctx_for(), secret=SECRET, principal=None) == {"order": 1}
    with pytest.raises(McpError, match=REJECTED):
        state.open(token, ctx_for(), secret=SECRET, principal=None)


def test_invalid_tokens_never_burn_the_store():
    calls: list[str] = []

    class Recording:
        def consume(self, token_id: str, ttl: float) -> bool:
            calls.append(token_id)
            return True

    token = once_token()
    for bad in (token + "x", token[:-3]):
        with pytest.raises(McpError, match=REJECTED):
            open_with(Recording(), bad)
    with pytest.raises(McpError, match=REJECTED):
        state.open(token, ctx_for({"name": "pay", "arguments": {"amount": 99}}), secret=SECRET,
                   principal=None, replay_store=Recording())
    assert calls == []


def test_the_store_keeps_an_id_until_the_token_expires():
    clock = Clock(1_800_000_000.0)
    ttls: list[float] = []

    class Recording:
        def consume(self, token_id: str, ttl: float) -> bool:
            ttls.append(ttl)
            return True

    token = once_token(ttl=120, clock=clock)
    clock.now += 100
    open_with(Recording(), token, clock=clock)
    assert 20 + state.codec.DEFAULT_LEEWAY <= ttls[0] <= 21 + state.codec.DEFAULT_LEEWAY


# -- Redis ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def redis_url():
    with redis_server.running() as url:
        yield url


@pytest.mark.slow
def test_redis_store_consumes_once_with_an_expiry(redis_url):
    import redis

    client = redis.Redis.from_url(redis_url)
    store = state.RedisReplayStore(client, prefix="t1:")
    assert store.consume("abc", 30)
    assert not store.consume("abc", 30)
    assert 29_000 < client.pttl("t1:abc") <= 30_000
    assert store.consume("short", 0.05)
    deadline = time.monotonic() + 10
    while not store.consume("short", 0.05):  # expired in Redis, so usable again (its token has too)
        assert time.monotonic() < deadline, "the 50 ms entry never expired"
        time.sleep(0.02)


@pytest.mark.slow
def test_two_redis_stores_share_consumption(redis_url):
    first = state.RedisReplayStore(url=redis_url)
    second = state.RedisReplayStore(url=redis_url)
    token = once_token()
    assert open_with(first, token) == {"order": 1}
    with pytest.raises(McpError, match=REJECTED):
        open_with(second, token)


def test_redis_store_configuration_errors():
    with pytest.raises(ValueError, match="pass exactly one of client= or url="):
        state.RedisReplayStore()
    with pytest.raises(ValueError, match="pass exactly one of client= or url="):
        state.RedisReplayStore(object(), url="redis://127.0.0.1:1/0")
    with pytest.raises(TypeError, match=r"client must be a redis client \(with a register_script\(\) method\)"):
        state.RedisReplayStore(object())
    with pytest.raises(TypeError, match="url must be a str"):
        state.RedisReplayStore(url=42)  # type: ignore[arg-type]


def test_redis_store_failures_surface_as_errors():
    redis = components.module("redis", "redis")
    store = state.RedisReplayStore(url="redis://127.0.0.1:1/0")  # nothing listens on port 1

    with pytest.raises(redis.ConnectionError, match="connecting to 127.0.0.1:1"):
        open_with(store, once_token())


# -- a fleet: two rondo HTTP servers sharing one Redis ----------------------------------------

APP = textwrap.dedent(
    '''
    import os

    import rondo
    from rondo import InputRequired
    from rondo.state import RedisReplayStore, StatePolicy

    policy = StatePolicy.from_env(
        once=True,
        replay_store=RedisReplayStore(url=os.environ["SHOP_REDIS_URL"]),
        principal=lambda ctx: "shopper",
    )
    server = rondo.Server("shop", state=policy)


    @server.tool
    def pay(amount: int, ctx: rondo.Context) -> object:
        """Take a payment after a confirmation round; the quote travels as one-time state."""
        if ctx.state is None:
            return InputRequired(state={"quote": amount, "node": os.environ["SHOP_NODE"]})
        return f"paid {ctx.state['quote']} quoted by {ctx.state['node']} on {os.environ['SHOP_NODE']}"
    '''
)

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "fleet-test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


@pytest.fixture(scope="module")
def fleet(redis_url, tmp_path_factory):
    app = tmp_path_factory.mktemp("fleet") / "shop_app.py"
    app.write_text(APP)
    secret = base64.urlsafe_b64encode(b"f" * 32).decode().rstrip("=")
    env = {**os.environ, "SHOP_REDIS_URL": redis_url, "RONDO_STATE_KEYS": f"fleet1:{secret}"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(state.__file__).parents[2]),
                                                      env.get("PYTHONPATH")]))
    with node_pair(app, env, "SHOP_NODE") as nodes:
        yield nodes


async def _post(client: Any, url: str, rid: int, amount: int, token: str | None = None) -> dict:
    params: dict[str, Any] = {"name": "pay", "arguments": {"amount": amount}, "_meta": META}
    if token is not None:
        params["requestState"] = token
    reply = await client.post(
        url,
        json={"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params},
        headers={"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                 "Mcp-Name": "pay", "Accept": "application/json, text/event-stream"},
    )
    if reply.headers.get("content-type", "").startswith("text/event-stream"):
        for line in reply.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                event = json.loads(line[5:])
                if event.get("id") == rid:
                    return event
        raise AssertionError("no response on the stream")
    return reply.json()


def _text(response: dict) -> str:
    return response["result"]["content"][0]["text"]


@pytest.mark.slow
def test_a_token_consumed_on_one_node_is_refused_on_the_other(fleet):
    import httpx

    a, b = fleet

    async def scenario() -> None:
        async with httpx.AsyncClient(timeout=10) as client:
            first = await _post(client, a.url, 1, 25)
            token = first["result"]["requestState"]
            assert first["result"]["resultType"] == "input_required"
            done = await _post(client, b.url, 2, 25, token)
            assert _text(done) == "paid 25 quoted by A on B"  # the fleet shares keys
            again_b = await _post(client, b.url, 3, 25, token)
            again_a = await _post(client, a.url, 4, 25, token)
            for refused in (again_b, again_a):
                assert refused["error"] == {"code": -32602, "message": state.REJECTED_MESSAGE}

    asyncio.run(scenario())


@pytest.mark.slow
def test_a_token_raced_to_both_nodes_completes_exactly_once(fleet):
    import httpx

    a, b = fleet

    async def scenario() -> None:
        async with httpx.AsyncClient(timeout=10) as client:
            for round_ in range(5):
                first = await _post(client, b.url, 10 + round_, 7)
                token = first["result"]["requestState"]
                replies = await asyncio.gather(
                    _post(client, a.url, 100 + round_, 7, token),
                    _post(client, b.url, 200 + round_, 7, token),
                )
                completed = [r for r in replies if "result" in r]
                refused = [r for r in replies if "error" in r]
                assert len(completed) == 1 and len(refused) == 1
                assert refused[0]["error"]["code"] == -32602

    asyncio.run(scenario())
