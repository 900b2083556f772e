"""rondo.auth against a real authorization server (oauth2-mock-server on loopback, real RS256
JWTs): every refusal the issue lists, rotation, an unreachable AS, scopes, principal binding."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

import rondo
from rondo.auth import IntrospectionVerifier, JwtVerifier, ResourceServer
from rondo.auth.errors import VerifierUnavailable
from rondo.auth.fetch import Fetcher, metadata_urls
from rondo.auth.jwks import Jwks
from tests.authserver.fixture import AuthServer
from tests.helpers.auth_helpers import (
    METADATA_URL,
    RESOURCE,
    call,
    challenge_params,
    post,
    protected_server,
)
from tests.helpers.helpers_core import asgi_client, check, request, run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def auth() -> Iterator[AuthServer]:
    with AuthServer.start() as server:
        yield server


def resource_server(auth: AuthServer, **kw: Any) -> ResourceServer:
    kw.setdefault("scopes_supported", ["mcp:use"])
    kw.setdefault("required_scopes", ["mcp:use"])
    return ResourceServer(resource=RESOURCE, issuer=auth.issuer, **kw)


@pytest.fixture(scope="module")
def app(auth: AuthServer) -> Any:
    # No refresh cool-down: these tests rotate keys and try unknown kids in quick succession.
    verifier = JwtVerifier(auth.issuer, RESOURCE, jwks_min_refresh=0)
    return protected_server(resource_server(auth, verifier=verifier)).asgi()


def good(auth: AuthServer, **claims: Any) -> str:
    claims.setdefault("aud", RESOURCE)
    claims.setdefault("scope", "mcp:use")
    return auth.mint(**claims)


def refused(response: Any, status: int = 401, error: str | None = "invalid_token") -> dict[str, str]:
    assert response.status_code == status, response.text
    params = challenge_params(response)
    assert params["resource_metadata"] == METADATA_URL
    if error is None:
        assert "error" not in params
    else:
        assert params["error"] == error
    assert "offline_access" not in params.get("scope", "")
    body = response.json()
    assert body["jsonrpc"] == "2.0" and "id" not in body and body["error"]["code"] == -32600
    check(body)
    return params


# -- accepted ---------------------------------------------------------------------------------------


def test_a_valid_token_is_accepted_and_ctx_auth_has_its_claims(auth, app):
    token = good(auth, sub="alice", client_id="cli-1", custom="x", scope="mcp:use files:read")
    response = run(post(app, call("whoami"), token))
    assert response.status_code == 200, response.text
    result = check(response.json(), "tools/call")["result"]
    assert result["structuredContent"] == {
        "subject": "alice", "client_id": "cli-1", "scopes": ["files:read", "mcp:use"],
        "issuer": auth.issuer, "custom": "x"}


def test_an_audience_list_naming_us_is_accepted(auth, app):
    token = good(auth, aud=["https://other.example/api", RESOURCE])
    assert run(post(app, call("whoami"), token)).status_code == 200


# -- refused: 401 with the challenge -----------------------------------------------------------------


def test_no_token_is_401_with_resource_metadata_and_scope(app):
    params = refused(run(post(app, call("whoami"))), error=None)
    assert params["scope"] == "mcp:use"


def _hs256_with_public_key(auth: AuthServer) -> str:
    """The classic key-confusion forgery: HS256 keyed with the issuer's public key."""
    jwk = auth.jwks()["keys"][0]
    secret = json.dumps(jwk, sort_keys=True).encode()
    header = {"alg": "HS256", "typ": "JWT", "kid": jwk["kid"]}
    now = int(time.time())
    claims = {"iss": auth.issuer, "aud": RESOURCE, "sub": "mallory", "exp": now + 600,
              "scope": "mcp:use files:write"}
    return _sign_hs(header, claims, secret)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _sign_hs(header: dict[str, Any], claims: dict[str, Any], secret: bytes) -> str:
    signing = _b64(json.dumps(header).encode()) + "." + _b64(json.dumps(claims).encode())
    return signing + "." + _b64(hmac.new(secret, signing.encode(), hashlib.sha256).digest())


def _with_header(token: str, **extra: Any) -> str:
    head, body, sig = token.split(".")
    header = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    header.update(extra)
    return f"{_b64(json.dumps(header).encode())}.{body}.{sig}"


def _alg_none(auth: AuthServer) -> str:
    now = int(time.time())
    header = _b64(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    claims = _b64(json.dumps({"iss": auth.issuer, "aud": RESOURCE, "sub": "mallory",
                              "exp": now + 600, "scope": "mcp:use"}).encode())
    return f"{header}.{claims}."


def _tampered_signature(auth: AuthServer) -> str:
    token = good(auth)
    head, body, sig = token.split(".")
    flipped = ("A" if sig[10] != "A" else "B")
    return f"{head}.{body}.{sig[:10]}{flipped}{sig[11:]}"


def _escalated_claims(auth: AuthServer) -> str:
    token = good(auth)
    head, body, sig = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    claims["scope"] = "mcp:use files:write admin"
    return f"{head}.{_b64(json.dumps(claims).encode())}.{sig}"


BAD_TOKENS = {
    "expired": lambda a: good(a, expires_in=-120),
    "not yet valid": lambda a: good(a, nbf=int(time.time()) + 600, iat=int(time.time()) + 600),
    "wrong issuer": lambda a: good(a, iss="http://127.0.0.1:9/other"),
    "no issuer": lambda a: good(a, iss=None),
    "wrong audience": lambda a: good(a, aud="http://127.0.0.1:8000/other-mcp"),
    "no audience": lambda a: good(a, aud=None),
    "alg none": _alg_none,
    "HS256 with the public key": _hs256_with_public_key,
    "unknown kid": lambda a: a.ghost(aud=RESOURCE, scope="mcp:use"),
    "tampered signature": _tampered_signature,
    "tampered claims": _escalated_claims,
    "not a JWT": lambda a: "abc.def",
    "a jku header (keys from elsewhere)": lambda a: _with_header(good(a), jku="http://127.0.0.1:9/keys"),
    "garbage segments": lambda a: "e30.e30.e30",
}


@pytest.mark.parametrize("case", list(BAD_TOKENS))
def test_a_bad_token_is_401_invalid_token(auth, app, case, caplog):
    token = BAD_TOKENS[case](auth)
    caplog.set_level(logging.DEBUG)
    response = run(post(app, call("whoami"), token))
    params = refused(response)
    assert params["scope"] == "mcp:use"
    # Nothing echoes the token: not the body, not the challenge, not a log line.
    assert token not in response.text and token not in response.headers["www-authenticate"]
    assert all(token not in r.getMessage() for r in caplog.records)
    assert run(post(app, call("whoami"), good(auth))).status_code == 200  # still serving


def test_a_revoked_token_is_refused_through_introspection(auth):
    verifier = IntrospectionVerifier(auth.issuer, RESOURCE, cache_ttl=0)
    app = protected_server(resource_server(auth, verifier=verifier)).asgi()
    token = good(auth)
    assert run(post(app, call("whoami"), token)).status_code == 200
    auth.revoke(token)
    refused(run(post(app, call("whoami"), token)))


def test_introspection_results_are_cached_for_their_short_ttl(auth):
    verifier = IntrospectionVerifier(auth.issuer, RESOURCE, cache_ttl=30)
    app = protected_server(resource_server(auth, verifier=verifier)).asgi()
    token = good(auth)
    assert run(post(app, call("whoami"), token)).status_code == 200
    auth.revoke(token)
    # Within the cache ttl the earlier answer stands (the documented trade-off) ...
    assert run(post(app, call("whoami"), token)).status_code == 200
    # ... and an introspected wrong-audience token is refused like a JWT one.
    refused(run(post(app, call("whoami"), good(auth, aud="https://elsewhere.example/mcp"))))


# -- keys: rotation, an unreachable authorization server ------------------------------------------


def test_jwks_rotation_is_picked_up_without_a_restart(auth):
    verifier = JwtVerifier(auth.issuer, RESOURCE, jwks_min_refresh=0.2)
    # The key set's clock is the test's: min_refresh passes when the test says, however slowly
    # a loaded machine runs the requests.
    now = [1000.0]
    given = verifier.keys[auth.issuer]
    verifier.keys[auth.issuer] = Jwks(auth.issuer, given.fetcher, jwks_uri=given.jwks_uri,
                                      ttl=given.ttl, min_refresh=given.min_refresh,
                                      max_stale=given.max_stale, clock=lambda: now[0])
    app = protected_server(resource_server(auth, verifier=verifier)).asgi()
    assert run(post(app, call("whoami"), good(auth))).status_code == 200
    fetches = verifier.keys[auth.issuer].fetches
    kid = auth.rotate()
    now[0] += 0.25
    token = good(auth, kid=kid)
    assert json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))["kid"] == kid
    assert run(post(app, call("whoami"), token)).status_code == 200
    assert verifier.keys[auth.issuer].fetches == fetches + 1
    # Made-up kids do not turn into a JWKS fetch per request (at most one per min_refresh).
    ghosts = [auth.ghost(aud=RESOURCE, scope="mcp:use") for _ in range(5)]
    now[0] += 0.25
    for ghost in ghosts:
        refused(run(post(app, call("whoami"), ghost)))
    assert verifier.keys[auth.issuer].fetches == fetches + 2  # one refresh for five unknown kids


@pytest.fixture
def blackhole() -> Iterator[str]:
    """A loopback port that accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(sock.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        sock.close()


def _unavailable(response: Any) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == "5"
    assert "www-authenticate" not in response.headers
    body = response.json()
    assert body["error"]["code"] == -32603 and "unavailable" in body["error"]["message"]


def fetch_outcomes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """How each fetch the auth code makes ends: its VerifierUnavailable message, or "ok"."""
    outcomes: list[str] = []
    original = Fetcher.json

    async def recorded(self: Fetcher, url: str, **kw: Any) -> Any:
        try:
            body = await original(self, url, **kw)
        except VerifierUnavailable as exc:
            outcomes.append(str(exc))
            raise
        outcomes.append("ok")
        return body

    monkeypatch.setattr(Fetcher, "json", recorded)
    return outcomes


def test_an_authorization_server_that_hangs_gives_503_in_bounded_time(auth, blackhole, monkeypatch):
    verifier = JwtVerifier(blackhole, RESOURCE, timeout=1.0)
    app = protected_server(ResourceServer(resource=RESOURCE, issuer=blackhole, verifier=verifier)).asgi()
    token = good(auth, iss=blackhole)
    outcomes = fetch_outcomes(monkeypatch)
    _unavailable(run(asyncio.wait_for(post(app, call("whoami"), token), 30)))  # a hang guard
    # Bounded by the verifier's own 1 s timeout, once per metadata URL: no retries, no stopwatch.
    assert outcomes and len(outcomes) <= len(metadata_urls(blackhole)), outcomes
    assert all(o.endswith("did not answer within 1s") for o in outcomes), outcomes
    # Within the cool-down the next request fails fast instead of waiting again: no new
    # attempt reaches the hanging server (counted, not timed).
    fetcher = verifier.keys[blackhole].fetcher
    attempts: list[str] = []
    original = fetcher.json

    async def counted(url: str, **kw: Any) -> Any:
        attempts.append(url)
        return await original(url, **kw)

    fetcher.json = counted  # type: ignore[method-assign]
    _unavailable(run(post(app, call("whoami"), token)))
    assert attempts == []


def test_an_authorization_server_that_is_down_gives_503_fast(auth, free_port, monkeypatch):
    issuer = f"http://127.0.0.1:{free_port}"
    app = protected_server(ResourceServer(resource=RESOURCE, issuer=issuer)).asgi()
    outcomes = fetch_outcomes(monkeypatch)
    _unavailable(run(asyncio.wait_for(post(app, call("whoami"), good(auth, iss=issuer)), 30)))
    # Fast by count: one refused connection per metadata URL, no retries nor back-off waits.
    assert outcomes and len(outcomes) <= len(metadata_urls(issuer)), outcomes
    assert all(o.endswith("unreachable (ConnectError)") for o in outcomes), outcomes


# -- scopes --------------------------------------------------------------------------------------------


def test_insufficient_scope_is_403_naming_every_scope_the_operation_needs(auth, app):
    token = good(auth, scope="mcp:use")
    response = run(post(app, call("write", {"path": "a"}), token))
    assert response.status_code == 403, response.text
    params = challenge_params(response)
    assert params["error"] == "insufficient_scope"
    assert params["scope"] == "mcp:use files:write"  # all of them, in one challenge
    assert params["resource_metadata"] == METADATA_URL
    body = check(response.json())
    assert body["id"] == 1 and body["error"]["data"] == {"requiredScopes": ["mcp:use", "files:write"]}
    # A token without even the server-wide scope hears about both as well.
    response = run(post(app, call("write", {"path": "a"}), good(auth, scope="files:write")))
    assert challenge_params(response)["scope"] == "mcp:use files:write"
    # With the scope it goes through.
    response = run(post(app, call("write", {"path": "a"}), good(auth, scope="mcp:use files:write")))
    assert response.status_code == 200


def test_resources_and_prompts_have_scopes_too(auth, app):
    read = request("resources/read", {"uri": "files://readme"})
    assert challenge_params(run(post(app, read, good(auth))))["scope"] == "mcp:use files:read"
    assert run(post(app, read, good(auth, scope="mcp:use files:read"))).status_code == 200
    get = request("prompts/get", {"name": "audit"})
    assert run(post(app, get, good(auth))).status_code == 403
    assert run(post(app, get, good(auth, scope="mcp:use admin"))).status_code == 200


def test_scope_hierarchy_lets_a_broader_scope_stand_for_narrower_ones(auth):
    rs = resource_server(auth, scope_hierarchy={"admin": ["files:write"], "files:write": ["files:read"]})
    app = protected_server(rs).asgi()
    token = good(auth, scope="mcp:use admin")
    assert run(post(app, call("write", {"path": "a"}), token)).status_code == 200
    read = request("resources/read", {"uri": "files://readme"})
    assert run(post(app, read, token)).status_code == 200


def test_lists_hide_what_the_token_may_not_use_and_say_private(auth, app):
    response = run(post(app, request("tools/list"), good(auth)))
    result = check(response.json(), "tools/list")["result"]
    assert [t["name"] for t in result["tools"]] == ["whoami", "ask_name"]
    assert result["cacheScope"] == "private"
    response = run(post(app, request("tools/list"), good(auth, scope="mcp:use files:write")))
    assert [t["name"] for t in response.json()["result"]["tools"]] == ["whoami", "write", "ask_name"]


def test_list_filter_show_lists_everything_and_refuses_at_call_time(auth):
    app = protected_server(resource_server(auth, list_filter="show")).asgi()
    response = run(post(app, request("tools/list"), good(auth)))
    assert len(response.json()["result"]["tools"]) == 3
    assert run(post(app, call("write", {"path": "a"}), good(auth))).status_code == 403


# -- protected resource metadata ---------------------------------------------------------------------


def test_protected_resource_metadata_at_the_path_suffixed_well_known_uri(app, auth):
    async def get(path: str) -> Any:
        async with asgi_client(app) as client:
            return await client.get(path)

    response = run(get("/.well-known/oauth-protected-resource/mcp"))
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "*"
    assert response.json() == {"resource": RESOURCE, "authorization_servers": [auth.issuer],
                               "bearer_methods_supported": ["header"],
                               "scopes_supported": ["mcp:use"]}
    # The endpoint is not at the root, so the root form is not ours to answer.
    assert run(get("/.well-known/oauth-protected-resource")).status_code == 404


def test_an_endpoint_at_the_root_serves_both_well_known_forms(auth):
    rs = ResourceServer(resource="http://127.0.0.1:8000", issuer=auth.issuer)
    app = protected_server(rs).asgi(path=None)

    async def get(path: str) -> Any:
        async with asgi_client(app) as client:
            return await client.get(path)

    for path in ("/.well-known/oauth-protected-resource",):
        assert run(get(path)).json()["resource"] == "http://127.0.0.1:8000"


# -- the principal binds request state and sessions ---------------------------------------------------


def test_request_state_sealed_for_alice_is_refused_for_bob(auth, app):
    alice, bob = good(auth, sub="alice"), good(auth, sub="bob")
    first = run(post(app, call("ask_name"), alice)).json()["result"]
    assert first["resultType"] == "input_required"
    retry = call("ask_name", inputResponses={"name": {"action": "accept", "content": {"name": "A"}}},
                 requestState=first["requestState"])
    response = run(post(app, retry, bob))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32602
    response = run(post(app, retry, good(auth, sub="alice")))  # a fresh token, same user
    assert response.json()["result"]["content"][0]["text"] == "hello A"


def test_a_legacy_session_belongs_to_the_principal_that_opened_it(auth, app):
    alice, bob = good(auth, sub="alice"), good(auth, sub="bob")
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}}

    async def flow() -> tuple[Any, Any, Any, Any]:
        async with asgi_client(app) as client:
            base = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
            opened = await client.post("/mcp", json=init, headers={**base, "authorization": f"Bearer {alice}"})
            sid = opened.headers["mcp-session-id"]
            lst = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
            hdrs = {**base, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
            as_bob = await client.post("/mcp", json=lst, headers={**hdrs, "authorization": f"Bearer {bob}"})
            anon = await client.post("/mcp", json=lst, headers=hdrs)
            as_alice = await client.post("/mcp", json=lst, headers={**hdrs, "authorization": f"Bearer {alice}"})
            return opened, as_bob, anon, as_alice

    opened, as_bob, anon, as_alice = run(flow())
    assert opened.status_code == 200
    assert as_bob.status_code == 404 and as_bob.json()["error"]["message"] == "Session not found"
    assert anon.status_code == 401
    assert as_alice.status_code == 200
    assert [t["name"] for t in as_alice.json()["result"]["tools"]] == ["whoami", "ask_name"]


def test_legacy_calls_get_the_same_403_step_up(auth, app):
    alice = good(auth)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}}

    async def flow() -> Any:
        async with asgi_client(app) as client:
            base = {"content-type": "application/json", "accept": "application/json, text/event-stream",
                    "authorization": f"Bearer {alice}"}
            opened = await client.post("/mcp", json=init, headers=base)
            hdrs = {**base, "mcp-session-id": opened.headers["mcp-session-id"],
                    "mcp-protocol-version": "2025-11-25"}
            msg = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                   "params": {"name": "write", "arguments": {"path": "x"}}}
            return await client.post("/mcp", json=msg, headers=hdrs)

    response = run(flow())
    assert response.status_code == 403
    assert challenge_params(response)["scope"] == "mcp:use files:write"
    assert response.json()["id"] == 7


def test_a_verified_token_is_verified_once_then_served_from_the_cache(auth):
    rs = resource_server(auth)
    app = protected_server(rs).asgi()
    token = good(auth)
    calls = 0
    real = rs.verifier.verify

    async def counting(t: str) -> Any:
        nonlocal calls
        calls += 1
        return await real(t)

    rs.verifier.verify = counting  # type: ignore[method-assign]
    for _ in range(3):
        assert run(post(app, call("whoami"), token)).status_code == 200
    assert calls == 1 and len(rs.cache) == 1


def test_over_uvicorn_with_the_token_on_every_request(auth, free_port):
    """The whole stack on a real socket: uvicorn, the guard, the JWKS fetch."""
    import httpx
    import uvicorn

    resource = f"http://127.0.0.1:{free_port}/mcp"
    server = protected_server(ResourceServer(resource=resource, issuer=auth.issuer,
                                             required_scopes=["mcp:use"]))
    config = uvicorn.Config(server.asgi(), host="127.0.0.1", port=free_port, log_level="warning",
                            lifespan="on")
    userver = uvicorn.Server(config)
    thread = threading.Thread(target=userver.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not userver.started and time.monotonic() < deadline:
            time.sleep(0.02)
        from tests.helpers.helpers_core import http_headers

        msg = call("whoami")
        token = auth.mint(aud=resource, scope="mcp:use")
        with httpx.Client(timeout=10) as client:
            denied = client.post(resource, json=msg, headers=http_headers(msg))
            ok = client.post(resource, json=msg, headers={**http_headers(msg), "authorization": f"Bearer {token}"})
            prm = client.get(f"http://127.0.0.1:{free_port}/.well-known/oauth-protected-resource/mcp")
            huge = client.post(resource, json=msg, headers={**http_headers(msg), "authorization": "Bearer " + "a" * 100_000})
        assert denied.status_code == 401
        assert ok.status_code == 200 and ok.json()["result"]["structuredContent"]["subject"] == "alice"
        assert prm.json()["resource"] == resource
        assert 400 <= huge.status_code < 500  # uvicorn's own header limit or our 401: never a crash
    finally:
        userver.should_exit = True
        thread.join(10)


def test_concurrent_first_requests_share_one_jwks_fetch(auth):
    verifier = JwtVerifier(auth.issuer, RESOURCE)
    app = protected_server(resource_server(auth, verifier=verifier)).asgi()
    tokens = [good(auth, sub=f"u{i}") for i in range(8)]

    async def many() -> list[int]:
        responses = await asyncio.gather(*(post(app, call("whoami"), t) for t in tokens))
        return [r.status_code for r in responses]

    assert run(many()) == [200] * 8
    assert verifier.keys[auth.issuer].fetches == 1


def test_stdio_stays_unauthenticated(auth):
    """The spec: stdio takes its credentials from the environment; auth= guards HTTP only."""
    server = protected_server(resource_server(auth))
    response = run(server.core.handle(request("tools/call", {"name": "write", "arguments": {"path": "p"}})))
    assert response["result"]["content"][0]["text"] == "wrote p"


def test_ctx_auth_is_a_principal(auth, app):
    token = good(auth, sub="carol")
    result = run(post(app, call("whoami"), token)).json()["result"]["structuredContent"]
    assert result["subject"] == "carol"
    assert isinstance(rondo.auth.Principal, type)
