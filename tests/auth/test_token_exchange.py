"""`rondo.auth.TokenExchange` (RFC 8693, client side) against an STS played by an httpx
transport: the request it sends, the cache (per caller, scopes and target; refresh margin;
LRU bound), one exchange in flight per key, and every way an STS can fail (refused, down,
slow, garbage), each a clear exception within the bound with no token or secret in it or in
the logs. The real STS (tests/authserver) is in test_token_exchange_live.py."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import socket
import time
import traceback
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rondo.auth import (
    ExchangeRefused,
    ExchangeUnavailable,
    Principal,
    ResourceServer,
    TokenExchange,
    TokenExchangeError,
)
from rondo.auth.exchange import ACCESS_TOKEN, GRANT_TYPE

STS = "https://sts.example.com/token"
API = "https://api.example.com/"
SECRET = "gateway-secret-1234567890"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class Demo:
    """A verifier: the token `user:<name>:<scopes>` is that user with those scopes."""

    cache_ttl = 0.0

    async def verify(self, token: str) -> Principal:
        _, name, scopes = token.split(":")
        return Principal.from_claims({"sub": name, "iss": "https://sso.example.com",
                                      "scope": scopes.replace(",", " "), "exp": time.time() + 600})


RS = ResourceServer(resource="https://mcp.example.com/mcp", issuer="https://sso.example.com",
                    verifier=Demo())


async def acaller(token: str) -> Principal:
    """The principal `rondo.auth` makes of `token` (the path every request takes)."""
    return await RS.authenticate(token)


def caller(token: str) -> Principal:
    return asyncio.run(acaller(token))


def sts(answer: Callable[[httpx.Request], httpx.Response] | None = None,
        **options: Any) -> tuple[TokenExchange, list[httpx.Request]]:
    seen: list[httpx.Request] = []
    counter = iter(range(1, 10_000))

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if answer is not None:
            return answer(request)
        form = parse_qs(request.content.decode())
        return httpx.Response(200, json={
            "access_token": f"up-{next(counter)}-{form.get('audience', form.get('resource'))[0]}",
            "issued_token_type": ACCESS_TOKEN, "token_type": "Bearer", "expires_in": 300})

    options.setdefault("token_endpoint", STS)
    return TokenExchange(client_id="gateway", client_secret=SECRET,
                         transport=httpx.MockTransport(handle), **options), seen


def test_the_request_is_rfc_8693_with_basic_client_auth() -> None:
    exchange, seen = sts()
    token = "user:alice:files,mail"
    got = asyncio.run(exchange.token(caller(token), resource=API, audience="api", scope="files"))
    [request] = seen
    assert request.method == "POST" and str(request.url) == STS
    assert parse_qs(request.content.decode()) == {
        "grant_type": [GRANT_TYPE], "subject_token": [token],
        "subject_token_type": [ACCESS_TOKEN], "requested_token_type": [ACCESS_TOKEN],
        "resource": [API], "audience": ["api"], "scope": ["files"]}
    assert request.headers["authorization"] == "Basic " + base64.b64encode(
        f"gateway:{SECRET}".encode()).decode()
    assert got.access_token == "up-1-api" and got.authorization == "Bearer up-1-api"
    assert "up-1" not in repr(got) and SECRET not in repr(exchange)


def test_client_secret_post_puts_the_client_in_the_form() -> None:
    exchange, seen = sts(auth_method="client_secret_post")
    asyncio.run(exchange.token(caller("user:alice:x"), audience="api"))
    form = parse_qs(seen[0].content.decode())
    assert form["client_id"] == ["gateway"] and form["client_secret"] == [SECRET]
    assert "authorization" not in seen[0].headers


def test_cached_per_caller_scopes_and_target_until_the_refresh_margin() -> None:
    clock = Clock()
    exchange, seen = sts(clock=clock, refresh_margin=30)

    async def run() -> None:
        alice = await acaller("user:alice:a")
        first = await exchange.token(alice, audience="api")
        assert (await exchange.token(alice, audience="api")) is first  # cached
        assert (await exchange.token(await acaller("fresh:alice:a"), audience="api")) is first  # another token, same user, scopes
        assert len(seen) == 1
        await exchange.token(alice, audience="other")  # another target
        await exchange.token(await acaller("user:bob:a"), audience="api")  # another user
        await exchange.token(await acaller("user:alice:a,b"), audience="api")  # other scopes
        assert len(seen) == 4
        clock.now += 300 - 31  # outside the margin: still cached
        assert (await exchange.token(alice, audience="api")) is first
        clock.now += 2  # inside it: exchanged again
        again = await exchange.token(alice, audience="api")
        assert again is not first and len(seen) == 5
        exchange.forget(alice, audience="api")
        await exchange.token(alice, audience="api")
        assert len(seen) == 6

    asyncio.run(run())


def test_a_short_lived_token_is_refreshed_at_half_its_life() -> None:
    clock = Clock()
    exchange, seen = sts(lambda r: httpx.Response(200, json={
        "access_token": "x", "token_type": "bearer", "expires_in": 20}), clock=clock,
        refresh_margin=30)

    async def run() -> None:
        alice = await acaller("user:alice:a")
        await exchange.token(alice, audience="api")
        clock.now += 9.9
        await exchange.token(alice, audience="api")
        assert len(seen) == 1
        clock.now += 0.2
        await exchange.token(alice, audience="api")
        assert len(seen) == 2

    asyncio.run(run())


def test_the_cache_is_bounded_least_recently_used_first() -> None:
    exchange, seen = sts(cache_size=2)

    async def run() -> None:
        alice = await acaller("user:alice:a")
        for audience in ("a", "b", "a", "c"):  # "a" used again, so "b" is the oldest
            await exchange.token(alice, audience=audience)
        assert len(seen) == 3
        await exchange.token(alice, audience="a")
        assert len(seen) == 3
        await exchange.token(alice, audience="b")
        assert len(seen) == 4

    asyncio.run(run())


def test_fifty_concurrent_calls_share_one_exchange_and_a_cancelled_waiter_cancels_nothing() -> None:
    async def run() -> None:
        gate = asyncio.Event()
        calls = 0

        async def handle(request: httpx.Request) -> httpx.Response:
            nonlocal calls
            calls += 1
            await gate.wait()
            return httpx.Response(200, json={"access_token": f"t{calls}", "token_type": "Bearer",
                                             "expires_in": 300})

        exchange = TokenExchange(token_endpoint=STS, client_id="gateway", client_secret=SECRET,
                                 transport=httpx.MockTransport(handle))
        alice = await acaller("user:alice:a")
        waiters = [asyncio.create_task(exchange.token(alice, audience="api")) for _ in range(50)]
        deadline = time.monotonic() + 5
        while calls == 0:
            assert time.monotonic() < deadline, "no exchange started"
            await asyncio.sleep(0.01)
        waiters[0].cancel()
        gate.set()
        done = await asyncio.gather(*waiters[1:])
        assert {got.access_token for got in done} == {"t1"} and calls == 1
        assert waiters[0].cancelled()
        assert exchange.exchanges == 1

    asyncio.run(run())


def _failures() -> list[tuple[str, Callable[[httpx.Request], httpx.Response], type, str]]:
    token = "user:alice:a"

    def echo(request: httpx.Request) -> httpx.Response:  # an STS that quotes the request back
        return httpx.Response(400, json={"error": "invalid_grant",
                                         "error_description": f"bad token {token} from {SECRET}"})

    return [
        ("refused", lambda r: httpx.Response(400, json={
            "error": "invalid_target", "error_description": "api is not allowed"}),
         ExchangeRefused, r"refused the exchange \(invalid_target\): api is not allowed"),
        ("client", lambda r: httpx.Response(401, json={"error": "invalid_client"}),
         ExchangeRefused, r"\(invalid_client\)$"),
        ("echo", echo, ExchangeRefused, r"\(invalid_grant\): \(withheld: it quoted the request\)"),
        ("5xx", lambda r: httpx.Response(503, text="down"), ExchangeUnavailable, "HTTP 503"),
        ("400 not json", lambda r: httpx.Response(400, text="<html>"), ExchangeUnavailable,
         "HTTP 400"),
        ("redirect", lambda r: httpx.Response(302, headers={"location": "https://evil.example"}),
         ExchangeUnavailable, "HTTP 302"),
        ("garbage", lambda r: httpx.Response(200, content=b"\x00{not json"), ExchangeUnavailable,
         "invalid JSON"),
        ("array", lambda r: httpx.Response(200, json=[1]), ExchangeUnavailable,
         "not a token response"),
        ("no token", lambda r: httpx.Response(200, json={"token_type": "Bearer"}),
         ExchangeUnavailable, "no usable access_token"),
        ("not bearer", lambda r: httpx.Response(200, json={"access_token": "x", "token_type": "N_A"}),
         ExchangeUnavailable, "not a bearer token"),
        ("bad expiry", lambda r: httpx.Response(200, json={
            "access_token": "x", "token_type": "Bearer", "expires_in": -5}),
         ExchangeUnavailable, "unusable expires_in"),
        ("other type", lambda r: httpx.Response(200, json={
            "access_token": "x", "token_type": "Bearer",
            "issued_token_type": "urn:ietf:params:oauth:token-type:id_token"}),
         ExchangeUnavailable, "another token type"),
        ("huge", lambda r: httpx.Response(200, content=b" " * 200_000), ExchangeUnavailable,
         "more than 65536 bytes"),
        ("unreachable", lambda r: (_ for _ in ()).throw(httpx.ConnectError("refused")),
         ExchangeUnavailable, r"unreachable \(ConnectError\)"),
    ]


@pytest.mark.parametrize(("name", "answer", "kind", "message"), _failures(),
                         ids=[f[0] for f in _failures()])
def test_every_sts_failure_is_a_clear_exception_without_secrets(
        name: str, answer: Callable[[httpx.Request], httpx.Response], kind: type, message: str,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    exchange, seen = sts(answer)
    token = "user:alice:a"
    alice = caller(token)
    with pytest.raises(kind, match=message) as raised:
        asyncio.run(exchange.token(alice, audience="api"))
    assert isinstance(raised.value, TokenExchangeError)
    shown = "".join(traceback.format_exception(raised.value))  # chained causes included
    for text in (str(raised.value), repr(raised.value), shown, caplog.text):
        assert token not in text and SECRET not in text
    # A failure is not cached: the next call asks again.
    with pytest.raises(kind, match=message):
        asyncio.run(exchange.token(alice, audience="api"))
    assert len(seen) == 2


def test_no_verified_caller_or_no_token_is_refused_before_any_request() -> None:
    exchange, seen = sts()

    class Ctx:
        auth = None

    with pytest.raises(TokenExchangeError, match="no verified caller"):
        asyncio.run(exchange.token(Ctx(), audience="api"))
    untokened = Principal.from_claims({"sub": "alice", "iss": "https://sso.example.com"})
    with pytest.raises(TokenExchangeError, match="no bearer token to exchange"):
        asyncio.run(exchange.token(untokened, audience="api"))
    with pytest.raises(ValueError, match="name the upstream"):
        asyncio.run(exchange.token(caller("user:a:b"), scope="x"))
    with pytest.raises(ValueError, match="resource must use https"):
        asyncio.run(exchange.token(caller("user:a:b"), resource="http://api.example.com/"))
    assert seen == []


@pytest.mark.parametrize(("options", "message"), [
    ({"token_endpoint": STS, "client_id": "g"}, "needs client_secret"),
    ({"token_endpoint": STS, "client_id": "g", "client_secret": ""}, "needs client_secret"),
    ({"token_endpoint": STS, "client_id": "", "client_secret": "s"}, "needs client_id"),
    ({"client_id": "g", "client_secret": "s"}, "exactly one of token_endpoint= and issuer="),
    ({"token_endpoint": STS, "issuer": "https://sso.example.com", "client_id": "g",
      "client_secret": "s"}, "exactly one of"),
    ({"token_endpoint": "http://sts.example.com/token", "client_id": "g", "client_secret": "s"},
     "must use https outside loopback"),
    ({"token_endpoint": STS, "client_id": "g", "client_secret": "s", "auth_method": "jwt"},
     "auth_method must be one of"),
    ({"token_endpoint": STS, "client_id": "g", "client_secret": "s", "auth_method": "none"},
     "sends no client_secret"),
    ({"token_endpoint": STS, "client_id": "g", "client_secret": "s", "timeout": 0},
     "timeout must be a positive"),
    ({"token_endpoint": STS, "client_id": "g", "client_secret": "s", "cache_size": -1},
     "cache_size must be"),
    ({"token_endpoint": STS, "client_id": "g", "client_secret": "s", "refresh_margin": -1},
     "refresh_margin must be"),
])
def test_misconfiguration_fails_at_construction(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TokenExchange(**options)


def test_a_public_client_sends_its_id_only() -> None:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"access_token": "x", "token_type": "Bearer"})

    exchange = TokenExchange(token_endpoint=STS, client_id="gateway", auth_method="none",
                             transport=httpx.MockTransport(handle), clock=Clock(), default_ttl=60)
    got = asyncio.run(exchange.token(caller("user:alice:a"), audience="api"))
    assert got.expires_at == Clock()() + 60  # no expires_in: default_ttl
    form = parse_qs(seen[0].content.decode())
    assert form["client_id"] == ["gateway"] and "client_secret" not in form


@pytest.mark.parametrize("how", ["silent", "refused"])
def test_a_real_sts_that_hangs_or_is_gone_fails_within_the_timeout(how: str) -> None:
    """Real sockets: a listener that accepts and never answers; a port nobody listens on."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    if how == "silent":
        listener.listen(8)
    else:
        listener.close()
    try:
        exchange = TokenExchange(token_endpoint=f"http://127.0.0.1:{port}/token",
                                 client_id="gateway", client_secret=SECRET, timeout=0.5)
        started = time.monotonic()
        expected = "did not answer within 0.5s" if how == "silent" else "unreachable"
        with pytest.raises(ExchangeUnavailable, match=expected):
            asyncio.run(exchange.token(caller("user:alice:a"), audience="api"))
        assert time.monotonic() - started < 2.0
    finally:
        listener.close()


@settings(max_examples=150, deadline=None)
@given(status=st.sampled_from([200, 400, 401, 500]),
       body=st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                         | st.text(max_size=30),
                         lambda inner: st.lists(inner, max_size=4)
                         | st.dictionaries(st.sampled_from(
                             ["access_token", "token_type", "expires_in", "error",
                              "error_description", "issued_token_type", "scope", "x"]),
                             inner, max_size=6), max_leaves=12))
def test_any_sts_answer_is_a_token_or_a_token_exchange_error(status: int, body: Any) -> None:
    token = "user:alice:a"
    exchange, _ = sts(lambda r: httpx.Response(status, content=json.dumps(body).encode()))
    try:
        got = asyncio.run(exchange.token(caller(token), audience="api"))
    except TokenExchangeError as exc:
        assert token not in str(exc) and SECRET not in str(exc) and len(str(exc)) < 400
    else:
        assert status == 200 and isinstance(body, dict)
        assert got.access_token == body["access_token"] and got.expires_at > 0


def test_upstream_auth_sends_the_callers_token_retries_a_401_once_and_else_uses_otherwise() -> None:
    from rondo.auth.principal import CALLER

    exchange, seen = sts()
    upstream_seen: list[str | None] = []
    refuse_next = [True]

    def upstream(request: httpx.Request) -> httpx.Response:
        upstream_seen.append(request.headers.get("authorization"))
        if refuse_next[0] and request.headers.get("authorization", "").startswith("Bearer up-"):
            refuse_next[0] = False
            return httpx.Response(401)
        return httpx.Response(200)

    class Own(httpx.Auth):  # the proxy's own credential
        def auth_flow(self, request: httpx.Request):  # type: ignore[no-untyped-def]
            request.headers["authorization"] = "Bearer own"
            yield request

    async def run() -> list[int]:
        alice = await acaller("user:alice:a")
        statuses = []
        for auth in (exchange.upstream_auth(resource=API, otherwise=Own()),
                     exchange.upstream_auth(resource=API)):
            async with httpx.AsyncClient(transport=httpx.MockTransport(upstream), auth=auth) as http:
                statuses.append((await http.get(API)).status_code)  # nobody relayed: otherwise
                token = CALLER.set(alice)
                try:
                    statuses.append((await http.get(API)).status_code)
                finally:
                    CALLER.reset(token)
        return statuses

    assert asyncio.run(run()) == [200, 200, 200, 200]
    # own; alice's first exchanged token refused (401), dropped, exchanged again and accepted;
    # bare (no otherwise); alice's cached second token.
    assert upstream_seen == ["Bearer own", f"Bearer up-1-{API}", f"Bearer up-2-{API}",
                             None, f"Bearer up-2-{API}"]
    assert len(seen) == 2


def test_an_sts_issuer_whose_metadata_cannot_be_had_is_unavailable_within_the_timeout() -> None:
    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    exchange = TokenExchange(issuer=f"http://127.0.0.1:{port}", client_id="gateway",
                             client_secret=SECRET, timeout=1)
    started = time.monotonic()
    with pytest.raises(ExchangeUnavailable, match=r"cannot discover the STS: .* unreachable"):
        asyncio.run(exchange.token(caller("user:alice:a"), audience="api"))
    assert time.monotonic() - started < 3 and exchange.exchanges == 0


def test_aclose_closes_the_pool_and_the_next_use_opens_another() -> None:
    exchange, seen = sts()

    async def run() -> None:
        await exchange.token(await acaller("user:alice:a"), audience="a")
        await exchange.aclose()
        await exchange.aclose()  # twice is harmless
        await exchange.token(await acaller("user:alice:a"), audience="b")

    asyncio.run(run())
    assert len(seen) == 2
