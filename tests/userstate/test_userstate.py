"""Per-user state (`rondo.userstate`): scoping, TTL, compare-and-set, take-once, bounds and a
store that is down, through real tool calls on the in-memory link, on every store."""

from __future__ import annotations

import asyncio
import functools
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rondo
from rondo.auth.principal import Principal
from rondo.fleet.guard import FleetError, check_fleet
from rondo.testing import connect
from rondo.userstate import (
    ABSENT,
    FileStore,
    MemoryStore,
    NoPrincipal,
    RedisStore,
    StateTooLarge,
    StoreUnavailable,
    UserState,
)
from tests.helpers import redis_server


def run_async(fn: Any) -> Any:
    """Run an async test body with asyncio.run (the suite has no async plugin)."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return asyncio.run(fn(*args, **kwargs))
    return wrapper


META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}


def who(sub: str, client: str = "app") -> Principal:
    return Principal.from_claims({"sub": sub, "iss": "https://as.example", "client_id": client})


def make_server(store: Any, **options: Any) -> rondo.Server:
    server = rondo.Server("state-demo", state=None)
    server.extension(UserState(store, **options))

    @server.tool
    async def put(key: str, value: str, ctx: rondo.Context) -> str:
        """Store a value."""
        await ctx.user_state.set(key, value)
        return "ok"

    @server.tool
    async def read(key: str, ctx: rondo.Context) -> str:
        """Read a value."""
        return str(await ctx.user_state.get(key, "<none>"))

    @server.tool
    def read_sync(key: str, ctx: rondo.Context) -> str:
        """Read a value from a plain def."""
        return str(ctx.user_state.sync.get(key, "<none>"))

    @server.tool
    async def take(key: str, ctx: rondo.Context) -> str:
        """Take a value once."""
        return str(await ctx.user_state.take(key, "<gone>"))

    return server


async def call(conn: Any, name: str, rid: int = 1, **arguments: Any) -> dict[str, Any]:
    reply = await conn.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                             "params": {"name": name, "arguments": arguments, "_meta": META}})
    return reply["result"]  # type: ignore[no-any-return]


def text(result: dict[str, Any]) -> str:
    return result["content"][0]["text"]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def redis_url():
    from tests.helpers import fleet_parts

    fleet_parts.need("redis-server")
    with redis_server.running() as url:
        yield url


@pytest.fixture(params=["memory", "file", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "memory":
        return MemoryStore()
    if request.param == "file":
        return FileStore(tmp_path / "state.db")
    url = request.getfixturevalue("redis_url")
    import secrets

    return RedisStore(url, prefix=f"t{secrets.token_hex(4)}:")


@run_async
async def test_values_belong_to_their_user_and_never_leak(store: Any) -> None:
    server = make_server(store)
    alice, bob = connect(server, auth=who("alice")), connect(server, auth=who("bob"))
    assert text(await call(alice, "put", key="cart", value="3 apples")) == "ok"
    assert text(await call(alice, "read", key="cart")) == "3 apples"
    assert text(await call(alice, "read_sync", key="cart")) == "3 apples"
    assert text(await call(bob, "read", key="cart")) == "<none>"
    # The same user through another client shares the space under scope="principal".
    assert text(await call(connect(server, auth=who("alice", "other")), "read", key="cart")) == "3 apples"


@run_async
async def test_anonymous_callers_are_refused_by_default_and_share_only_when_told() -> None:
    server = make_server(MemoryStore())
    result = await call(connect(server), "put", key="k", value="v")
    assert result["isError"] is True
    assert "needs an authenticated caller" in text(result)
    shared = make_server(MemoryStore(), anonymous="shared")
    assert text(await call(connect(shared), "put", key="k", value="v")) == "ok"
    assert text(await call(connect(shared), "read", key="k")) == "v"
    # An authenticated user never sees the anonymous space.
    assert text(await call(connect(shared, auth=who("alice")), "read", key="k")) == "<none>"


@run_async
async def test_client_scope_separates_clients_of_one_user() -> None:
    server = make_server(MemoryStore(), scope="client")
    await call(connect(server, auth=who("alice", "app-1")), "put", key="k", value="one")
    assert text(await call(connect(server, auth=who("alice", "app-2")), "read", key="k")) == "<none>"
    assert text(await call(connect(server, auth=who("alice", "app-1")), "read", key="k")) == "one"


@run_async
async def test_take_once_gives_the_value_to_exactly_one_of_many(store: Any) -> None:
    server = make_server(store)
    alice = connect(server, auth=who("alice"))
    await call(alice, "put", key="code", value="X1")
    results = await asyncio.gather(*(call(alice, "take", rid=i, key="code") for i in range(30)))
    assert sorted(text(r) for r in results) == ["<gone>"] * 29 + ["X1"]


def test_take_once_across_threads_on_the_sync_view(store: Any) -> None:
    view = UserState(store, anonymous="shared").view(_ctx())
    view.sync.set("ticket", 7)
    won: list[Any] = []
    barrier = threading.Barrier(8)

    def grab() -> None:
        barrier.wait()
        won.append(view.sync.take("ticket"))

    threads = [threading.Thread(target=grab) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(won, key=repr) == [7] + [None] * 7


@run_async
async def test_compare_and_set(store: Any) -> None:
    view = UserState(store, anonymous="shared").view(_ctx())
    assert await view.cas("n", ABSENT, {"v": 1}) is True
    assert await view.cas("n", ABSENT, {"v": 9}) is False  # exists now
    assert await view.cas("n", {"v": 2}, {"v": 3}) is False  # stale expectation
    assert await view.cas("n", {"v": 1}, {"v": 2}) is True
    assert await view.get("n") == {"v": 2}
    assert await view.cas("n", {"v": 2}, ABSENT) is True  # delete
    assert await view.get("n", "gone") == "gone"
    assert view.sync.cas("m", ABSENT, [1, 2]) is True
    assert view.sync.cas("m", [1, 2], [3]) is True
    assert view.sync.get("m") == [3]


@run_async
async def test_ttl_expires_values_on_an_injected_clock() -> None:
    now = [1000.0]
    view = UserState(MemoryStore(clock=lambda: now[0]), anonymous="shared").view(_ctx())
    await view.set("short", "x", ttl=5)
    await view.set("long", "y")
    now[0] += 4.9
    assert await view.get("short") == "x"
    now[0] += 0.2
    assert await view.get("short") is None
    assert await view.take("short") is None
    assert await view.get("long") == "y"


def test_file_store_ttl_and_sharing_between_two_stores(tmp_path: Path) -> None:
    now = [50.0]
    one = FileStore(tmp_path / "s.db", clock=lambda: now[0])
    two = FileStore(tmp_path / "s.db", clock=lambda: now[0])  # another process, in effect
    one.set_sync("k", b"v", 10)
    assert two.get_sync("k") == b"v"
    assert two.take_sync("k") == b"v"
    assert one.take_sync("k") is None
    one.set_sync("t", b"v", 10)
    now[0] += 11
    assert two.get_sync("t") is None


@run_async
async def test_redis_ttl_is_set_on_the_key(redis_url: str) -> None:
    import redis

    store = RedisStore(redis_url, prefix="ttl:")
    view = UserState(store, anonymous="shared").view(_ctx())
    await view.set("k", 1, ttl=30)
    keys = redis.Redis.from_url(redis_url).keys("ttl:*")
    assert len(keys) == 1
    assert 29_000 < redis.Redis.from_url(redis_url).pttl(keys[0]) <= 30_000


@run_async
async def test_keys_and_values_over_their_bounds_are_refused(store: Any) -> None:
    view = UserState(store, anonymous="shared", max_key_bytes=8, max_value_bytes=32).view(_ctx())
    with pytest.raises(StateTooLarge, match="key is over 8 bytes"):
        await view.set("123456789", 1)
    with pytest.raises(StateTooLarge, match="over the 32-byte bound"):
        await view.set("k", "x" * 40)
    with pytest.raises(StateTooLarge, match="over the 32-byte bound"):
        view.sync.cas("k", ABSENT, "x" * 40)
    assert await view.get("k") is None  # nothing was written


@run_async
async def test_a_full_memory_store_refuses_new_keys_and_reports_it() -> None:
    server = make_server(MemoryStore(max_entries=2))
    alice = connect(server, auth=who("alice"))
    await call(alice, "put", key="a", value="1")
    await call(alice, "put", key="b", value="2")
    result = await call(alice, "put", key="c", value="3")
    assert result["isError"] is True and "full (2 entries)" in text(result)
    assert text(await call(alice, "put", key="a", value="9")) == "ok"  # overwrite still fits


@run_async
async def test_a_redis_that_is_down_is_a_clear_error_not_a_silent_loss() -> None:
    from tests.helpers import fleet_parts

    port = fleet_parts.free_port()  # nothing listens there
    server = make_server(RedisStore(f"redis://127.0.0.1:{port}/0", timeout=0.5))
    alice = connect(server, auth=who("alice"))
    for tool in ("put", "read", "read_sync", "take"):
        result = await call(alice, tool, key="k", value="v") if tool == "put" else \
            await call(alice, tool, key="k")
        assert result["isError"] is True, tool
        assert "user state is unavailable (Redis did not answer" in text(result), tool
        assert str(port) not in text(result)  # no address in what the caller sees


def test_a_broken_file_store_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "dir.db").mkdir()
    with pytest.raises(StoreUnavailable, match="file store failed: OperationalError"):
        FileStore(tmp_path / "dir.db")  # at start-up
    store = FileStore(tmp_path / "s.db")
    store.set_sync("k", b"v", None)
    for name in ("s.db", "s.db-wal", "s.db-shm"):
        (tmp_path / name).unlink(missing_ok=True)
    (tmp_path / "s.db").write_bytes(b"not a database" * 100)
    fresh = FileStore.__new__(FileStore)  # a new connection (another thread) to the broken file
    fresh.__dict__.update(store.__dict__)
    fresh._local = threading.local()
    with pytest.raises(StoreUnavailable, match="file store failed: DatabaseError"):
        fresh.get_sync("k")


def test_ctx_user_state_without_the_extension_says_how_to_install_it() -> None:
    server = rondo.Server("plain", state=None)
    ctx = rondo.Context(server)
    with pytest.raises(RuntimeError, match=r"server.extension\(rondo.userstate.UserState"):
        ctx.user_state  # noqa: B018


def test_bad_configuration_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="scope must be"):
        UserState(scope="tenant")
    with pytest.raises(ValueError, match="anonymous must be"):
        UserState(anonymous="yes")
    with pytest.raises(TypeError, match="has no get"):
        UserState(store=object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_value_bytes must be"):
        UserState(max_value_bytes=0)


def test_the_fleet_guard_refuses_a_memory_store_with_more_than_one_worker(tmp_path: Path) -> None:
    server = rondo.Server("fleety", state=None)
    ext = server.extension(UserState(MemoryStore()))
    with pytest.raises(FleetError, match="per-user state store \\(MemoryStore\\) lives in one process"):
        check_fleet(server, workers=3, environ={})
    check_fleet(server, workers=1, environ={})  # one worker: fine
    ext.store = FileStore(tmp_path / "s.db")  # type: ignore[attr-defined]
    check_fleet(server, workers=3, environ={})


def test_the_fleets_redis_replaces_a_memory_store() -> None:
    from rondo.fleet.worker import connect_redis

    server = rondo.Server("fleety", state=None)
    ext = server.extension(UserState())
    connect_redis(server, "redis://127.0.0.1:1/0")
    assert isinstance(ext.store, RedisStore)  # type: ignore[attr-defined]
    assert ext.store.url == "redis://127.0.0.1:1/0"  # type: ignore[attr-defined]


def test_anonymous_refusal_is_raised_on_access() -> None:
    server = rondo.Server("x", state=None)
    server.extension(UserState())
    with pytest.raises(NoPrincipal, match="no verified principal"):
        rondo.Context(server).user_state  # noqa: B018


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(value=JSONISH)
def test_any_json_value_round_trips_and_cas_matches_equal_values(value: Any) -> None:
    view = UserState(MemoryStore(), anonymous="shared").view(_ctx())
    view.sync.set("k", value)
    assert view.sync.get("k") == value
    if isinstance(value, dict):
        reordered = dict(reversed(list(value.items())))
        assert view.sync.cas("k", reordered, "next") is True  # equal value, other key order
    else:
        assert view.sync.cas("k", value, "next") is True
    assert view.sync.take("k") == "next"


def _ctx() -> rondo.Context:
    return rondo.Context(rondo.Server("views", state=None))


def test_the_benchmark_runs_and_reports_each_store() -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1].parent
    done = subprocess.run([sys.executable, "benchmarks/bench_userstate.py", "--calls", "20",
                           "--rounds", "1"], cwd=root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    labels = [line.split(":")[0].strip() for line in done.stdout.splitlines()]
    assert labels == ["no state", "memory", "redis"]
