"""Hostile input at the facade's token, authorize and register endpoints (hypothesis), and the
store backends' atomic operations (memory, file, Redis)."""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rondo.auth.facade import FileStore, MemoryStore
from tests.helpers.components import module
from tests.helpers.facade_world import World

module("cryptography", "auth")

_WORLD: World | None = None
_TOKENS: dict = {}


def world() -> World:
    global _WORLD
    if _WORLD is None:
        _WORLD = World(registrations_per_minute=10_000, authorizations_per_minute=10_000)

        async def setup() -> None:
            _TOKENS.update(await _WORLD.sign_in())  # type: ignore[union-attr]

        asyncio.run(setup())
    return _WORLD


text = st.text(min_size=0, max_size=300)
ascii_junk = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=200)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(code=text, verifier=text, grant=st.sampled_from(["authorization_code", "refresh_token", "x", ""]),
       refresh=text)
def test_any_token_request_gets_a_json_oauth_error(code: str, verifier: str, grant: str, refresh: str) -> None:
    w = world()

    async def go() -> None:
        response = await w.token({"grant_type": grant, "code": code, "code_verifier": verifier,
                                  "refresh_token": refresh, "client_id": _TOKENS["client"]["client_id"]})
        assert response.status_code == 400, response.text
        if grant in ("authorization_code", "refresh_token"):  # a junk code, verifier or token
            assert response.json()["error"] in ("invalid_grant", "invalid_request"), response.text
        else:
            assert response.json()["error"] == "unsupported_grant_type", response.text
        assert response.headers["cache-control"] == "no-store"

    asyncio.run(go())


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(token=ascii_junk)
def test_any_bearer_string_is_a_401_never_a_crash(token: str) -> None:
    w = world()

    async def go() -> None:
        for candidate in (token, _TOKENS["access_token"][:-3] + token[:3]):
            response = await w.call("whoami", candidate.strip() or "x")
            if candidate == _TOKENS["access_token"]:
                continue  # hypothesis found the original token's last three characters
            assert response.status_code == 401, response.text

    asyncio.run(go())


CALLBACK = "http://127.0.0.1:9999/callback"


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(query=st.dictionaries(st.sampled_from(["client_id", "redirect_uri", "response_type",
                                               "code_challenge", "code_challenge_method", "resource",
                                               "scope", "state"]), text, max_size=8),
       known=st.booleans(), redirect=st.sampled_from(["absent", "registered", "random"]))
def test_any_authorize_query_is_a_page_or_a_redirect_to_a_registered_uri(
        query: dict[str, str], known: bool, redirect: str) -> None:
    w = world()
    if known:  # the registered client (one redirect URI), so the later checks are reached too
        query["client_id"] = _TOKENS["client"]["client_id"]
    if redirect == "absent":
        query.pop("redirect_uri", None)
    elif redirect == "registered":
        query["redirect_uri"] = CALLBACK

    async def go() -> None:
        response = await w.http.get("/authorize", params=query)
        client_ok = query.get("client_id") == _TOKENS["client"]["client_id"]
        redirect_ok = query.get("redirect_uri", CALLBACK) == CALLBACK
        if not (client_ok and redirect_ok):  # never redirect for an unknown client or URI
            assert response.status_code == 400, response.text
            return
        if response.status_code == 200:  # the consent page: only for a well-formed request
            assert query.get("response_type") == "code"
            assert query.get("code_challenge_method") == "S256"
            return
        assert response.status_code == 302, response.text
        assert response.headers["location"].startswith(CALLBACK + "?")
        assert "error=" in response.headers["location"]

    asyncio.run(go())


junk = st.recursive(st.none() | st.booleans() | st.integers() | text,
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
                    max_leaves=12)
# Half the bodies name a registrable redirect URI, so a 201 is reached, not only refusals.
with_callback = st.builds(lambda extra, fields: {**extra, "redirect_uris": [CALLBACK], **fields},
                          st.dictionaries(text, junk, max_size=3),
                          st.dictionaries(st.sampled_from(["token_endpoint_auth_method", "grant_types",
                                                           "response_types", "client_name"]),
                                          junk, max_size=2))


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=junk | with_callback)
def test_any_registration_body_is_201_or_an_rfc_7591_error(body: object) -> None:
    w = world()

    async def go() -> None:
        response = await w.http.post("/register", json=body)
        if not isinstance(body, dict):
            assert response.status_code == 400, response.text
            assert response.json()["error"] == "invalid_client_metadata"
        elif body.get("redirect_uris") != [CALLBACK]:  # no list of registrable URIs
            assert response.status_code == 400, response.text
            assert response.json()["error"] == "invalid_redirect_uri"
        elif response.status_code == 201:
            assert response.json()["redirect_uris"] == [CALLBACK]
        else:  # a registrable URI with other metadata that is not acceptable
            assert response.status_code == 400, response.text
            assert response.json()["error"] == "invalid_client_metadata"
            assert {"token_endpoint_auth_method", "grant_types", "response_types",
                    "client_name"} & set(body)

    asyncio.run(go())


# -- stores -----------------------------------------------------------------------------------


async def exercise(store) -> None:  # type: ignore[no-untyped-def]
    assert await store.get("a") is None
    await store.put("a", b"1", 60)
    assert await store.get("a") == b"1"
    assert await store.add("a", b"2", 60) == b"1"  # present: the value there, unchanged
    assert await store.add("b", b"2", 60) is None
    assert await store.get_many(["a", "missing", "b"]) == [b"1", None, b"2"]
    assert await store.take("b") == b"2" and await store.take("b") is None
    assert [await store.count("n", 60) for _ in range(3)] == [1, 2, 3]
    await store.delete("a")
    assert await store.get("a") is None
    # Of many concurrent claims exactly one wins; of many takes exactly one gets the value.
    claims = await asyncio.gather(*(store.add("claim", str(i).encode(), 60) for i in range(20)))
    assert claims.count(None) == 1
    await store.put("once", b"x", 60)
    takes = await asyncio.gather(*(store.take("once") for _ in range(20)))
    assert takes.count(b"x") == 1


def test_memory_store_semantics_expiry_and_bound() -> None:
    now = [1000.0]
    store = MemoryStore(max_entries=5, clock=lambda: now[0])
    asyncio.run(exercise(store))
    from rondo.auth.facade import StoreFull

    async def bound() -> None:
        for i in range(10):
            try:
                await store.put(f"k{i}", b"v", 10)
            except StoreFull:
                break
        with pytest.raises(StoreFull, match="full"):
            await store.put("more", b"v", 10)
        now[0] += 61  # everything expires: room again
        await store.put("more", b"v", 10)
        assert await store.get("k1") is None

    asyncio.run(bound())


def test_file_store_semantics(tmp_path: Path) -> None:
    asyncio.run(exercise(FileStore(tmp_path / "s")))


def _claim(directory: str, i: int, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    store = FileStore(directory)
    out.put(asyncio.run(store.add("race", str(i).encode(), 60)) is None)


def test_file_store_add_is_atomic_across_processes(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    procs = [ctx.Process(target=_claim, args=(str(tmp_path / "s"), i, out)) for i in range(8)]
    for p in procs:
        p.start()
    results = [out.get(timeout=20) for _ in procs]
    for p in procs:
        p.join(10)
    assert results.count(True) == 1 and len(results) == 8


@pytest.mark.slow
def test_redis_store_semantics() -> None:
    from tests.helpers import redis_server

    with redis_server.running() as url:
        from rondo.auth.facade import RedisStore

        async def go() -> None:
            store = RedisStore(url, prefix="t1:")
            await exercise(store)
            await store.put("short", b"v", 0.05)
            deadline = time.monotonic() + 5  # Redis expires it on its own clock: poll, bounded
            while await store.get("short") is not None:
                assert time.monotonic() < deadline, "a 50 ms entry outlived 5 s"
                await asyncio.sleep(0.02)

        asyncio.run(go())


def test_file_store_sweeps_expired_files_as_it_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rondo.auth.facade import store as store_module

    monkeypatch.setattr(store_module, "SWEEP_EVERY", 10)
    now = [1000.0]
    store = FileStore(tmp_path / "s", clock=lambda: now[0])

    async def go() -> None:
        for i in range(5):
            await store.put(f"old{i}", b"v", 1)
        now[0] += 5
        for i in range(5):
            await store.put(f"new{i}", b"v", 60)  # the tenth write sweeps

    asyncio.run(go())
    files = [p for p in (tmp_path / "s").iterdir() if not p.name.startswith(".")]
    assert len(files) == 5


def test_a_full_memory_store_is_swept_at_most_once_a_second() -> None:
    now = [1000.0]
    store = MemoryStore(max_entries=2, clock=lambda: now[0])
    from rondo.auth.facade import StoreFull

    async def go() -> None:
        await store.put("a", b"1", 0.5)
        await store.put("b", b"1", 60)
        with pytest.raises(StoreFull, match="full"):
            await store.put("c", b"1", 60)  # sweeps now: nothing expired yet
        now[0] += 0.6  # "a" expired, but the last sweep was 0.6 s ago
        with pytest.raises(StoreFull, match="full"):
            await store.put("c", b"1", 60)
        now[0] += 0.5
        await store.put("c", b"1", 60)  # a second later: swept, room again

    asyncio.run(go())


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(form=st.dictionaries(st.sampled_from(["request", "csrf", "decision", "x"]), text, max_size=4),
       query=st.dictionaries(st.sampled_from(["code", "state", "error", "iss"]), text, max_size=4),
       cookie=ascii_junk)
def test_any_consent_post_or_callback_is_a_page_never_a_crash(form: dict[str, str], query: dict[str, str],
                                                             cookie: str) -> None:
    w = world()

    async def go() -> None:
        headers = {"cookie": f"__Host-rondo-csrf={cookie}; __Host-rondo-flow={cookie}".replace("\n", "")}
        consent = await w.http.post("/consent", data=form, headers=headers)
        assert consent.status_code == 400 and "location" not in consent.headers
        callback = await w.http.get("/callback", params=query, headers=headers)
        assert callback.status_code == 400 and "location" not in callback.headers

    asyncio.run(go())


@pytest.mark.slow
def test_a_store_that_is_away_is_a_503_in_bounded_time() -> None:
    """Redis down (a port nothing listens on): registration and token requests answer 503
    `temporarily_unavailable`, a tool call with a facade token 503, each within the timeout."""
    import socket
    import time

    import jwt

    from rondo.auth.facade import RedisStore
    from rondo.auth.facade.keys import generate_signing_key

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    w = World(store=RedisStore(f"redis://127.0.0.1:{port}/0", timeout=0.5))
    token = jwt.encode({"iss": "https://mcp.example.com", "aud": "https://mcp.example.com/mcp", "sub": "a",
                        "gid": "g" * 32, "iat": int(time.time()), "exp": int(time.time()) + 60},
                       generate_signing_key(), algorithm="RS256", headers={"kid": "k"})

    async def go() -> None:
        started = time.monotonic()
        reg = await w.http.post("/register", json={"redirect_uris": ["https://a.example.com/cb"]})
        assert reg.status_code == 503 and reg.json()["error"] == "temporarily_unavailable"
        tok = await w.token({"grant_type": "refresh_token", "refresh_token": "r" * 43, "client_id": "c" * 32})
        assert tok.status_code == 503
        call = await w.call("whoami", token)
        assert call.status_code == 503
        assert time.monotonic() - started < 10

    asyncio.run(go())


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(ops=st.lists(st.one_of(st.tuples(st.just("refresh"), st.integers(0, 12)),
                              st.tuples(st.just("advance"), st.integers(0, 40))), max_size=14))
def test_refresh_rotation_follows_its_model(ops: list[tuple[str, int]]) -> None:
    """Any sequence of refreshes (of any token the family has had) and clock moves against a
    model: an unrotated token rotates; a rotated one within `grace` (30 s) answers its same
    successor; after it, the whole family is revoked and every later refresh is refused."""
    w = World()

    async def go() -> None:
        tokens = await w.sign_in()
        family = [tokens["refresh_token"]]
        rotated: dict[int, tuple[float, int]] = {}  # token index -> (when, successor index)
        revoked = False
        for op, arg in ops:
            if op == "advance":
                w.clock.now += arg
                continue
            i = arg % len(family)
            answer = await w.refresh(tokens, family[i])
            now = w.clock.now
            if revoked:
                expected = None
            elif i not in rotated:
                expected = "new"
            elif now - rotated[i][0] <= 30:
                expected = family[rotated[i][1]]
            else:
                expected, revoked = None, True
            if expected is None:
                assert answer.status_code == 400 and answer.json()["error"] == "invalid_grant"
            elif expected == "new":
                assert answer.status_code == 200
                family.append(answer.json()["refresh_token"])
                rotated[i] = (now, len(family) - 1)
            else:
                assert answer.status_code == 200 and answer.json()["refresh_token"] == expected

    asyncio.run(go())
