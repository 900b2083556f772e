"""rondo.auth without an authorization server: configuration checked at start-up, the
Authorization header parser (hypothesis and a hostile table), challenges, a custom verifier,
and the cost of not configuring auth (nothing imported)."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rondo
from rondo.auth import InvalidToken, Principal, ResourceServer, VerifierUnavailable
from rondo.auth.challenge import BadRequest, bearer_token, www_authenticate
from rondo.auth.scopes import expander
from tests.helpers.auth_helpers import (
    METADATA_URL,
    RESOURCE,
    call,
    challenge_params,
    protected_server,
)
from tests.helpers.helpers_core import check, http_headers, run

ISSUER = "https://login.example.com/"


class StubVerifier:
    """A custom verifier (the TokenVerifier protocol): `good-token` is alice, `down` means the
    authorization server is unreachable, anything else is refused."""

    cache_ttl = 60.0

    def __init__(self) -> None:
        self.calls = 0

    async def verify(self, token: str) -> Principal:
        self.calls += 1
        if token == "down":
            raise VerifierUnavailable("stub AS is down")
        if token != "good-token":
            raise InvalidToken("The access token is invalid", reason="stub")
        return Principal.from_claims({"sub": "alice", "iss": ISSUER, "scope": "mcp:use",
                                      "exp": time.time() + 600})


def stub_app(**kw: Any) -> Any:
    rs = ResourceServer(resource=RESOURCE, issuer=ISSUER, verifier=StubVerifier(),
                        scopes_supported=["mcp:use"], **kw)
    return protected_server(rs).asgi()


# -- configuration fails at start-up ----------------------------------------------------------------


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"issuer": ISSUER}, "resource"),
    ({"resource": RESOURCE}, "issuer"),
    ({"resource": RESOURCE, "issuer": "http://login.example.com"}, "https outside loopback"),
    ({"resource": "http://mcp.example.com/mcp", "issuer": ISSUER}, "https outside loopback"),
    ({"resource": "mcp.example.com/mcp", "issuer": ISSUER}, "absolute https URL"),
    ({"resource": "https://mcp.example.com/mcp#x", "issuer": ISSUER}, "fragment"),
    ({"resource": RESOURCE, "issuer": ISSUER, "issuers": [ISSUER]}, "not both"),
    ({"resource": RESOURCE, "issuer": ISSUER, "scopes_supported": ["offline_access"]}, "offline_access"),
    ({"resource": RESOURCE, "issuer": ISSUER, "required_scopes": ["a b"]}, "scope token"),
    ({"resource": RESOURCE, "issuer": ISSUER, "list_filter": "maybe"}, "list_filter"),
])
def test_misconfiguration_is_a_value_error_at_construction(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        ResourceServer(**kwargs)


def test_http_issuers_and_resources_are_fine_on_loopback():
    rs = ResourceServer(resource="http://localhost:8000/mcp", issuer="http://127.0.0.1:9000")
    assert rs.metadata_url == "http://localhost:8000/.well-known/oauth-protected-resource/mcp"


@pytest.mark.parametrize("algorithms", [["none"], ["HS256"], ["RS256", "HS512"], []])
def test_symmetric_or_none_algorithms_are_refused(algorithms):
    from rondo.auth import JwtVerifier

    with pytest.raises(ValueError, match="asymmetric"):
        JwtVerifier(ISSUER, RESOURCE, algorithms=algorithms)


@pytest.mark.parametrize(("scopes", "needle"), [
    (["offline_access"], "offline_access is not a resource scope"),
    (["has space"], "'has space' is not a valid OAuth scope token"),
    ("files:read", "scopes must be a list of strings, got 'files:read'"),
    ([""], "'' is not a valid OAuth scope token"),
])
def test_component_scopes_are_checked_at_registration(scopes, needle):
    server = rondo.Server("s")
    with pytest.raises(ValueError, match=needle):
        server.tool(scopes=scopes)(lambda: "x")


def test_two_different_resource_servers_for_one_server_are_refused():
    rs = ResourceServer(resource=RESOURCE, issuer=ISSUER, verifier=StubVerifier())
    server = rondo.Server("s", auth=rs)
    other = ResourceServer(resource=RESOURCE, issuer=ISSUER, verifier=StubVerifier())
    with pytest.raises(ValueError, match="another ResourceServer"):
        server.asgi(auth=other)
    plain = rondo.Server("t")
    plain.asgi(auth=other)  # given to asgi() only: that works, and becomes the server's
    assert plain.auth is other


# -- not configured costs nothing -------------------------------------------------------------------


def test_a_server_without_auth_imports_neither_rondo_auth_nor_a_jose_library():
    code = (
        "import sys, asyncio, rondo\n"
        "s = rondo.Server('plain')\n"
        "s.tool(lambda x: x, name='echo')\n"
        "msg = {'jsonrpc': '2.0', 'id': 1, 'method': 'tools/list', 'params': {'_meta': {"
        "'io.modelcontextprotocol/protocolVersion': '2026-07-28',"
        "'io.modelcontextprotocol/clientCapabilities': {}}}}\n"
        "assert 'result' in asyncio.run(s.core.handle(msg))\n"
        "s.asgi()\n"
        "bad = sorted(m for m in sys.modules if m == 'jwt' or m.startswith(('jwt.', 'rondo.auth', 'cryptography')))\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


# -- the Authorization header ------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=200), max_size=3))
def test_the_header_parser_answers_every_input_with_a_token_none_or_a_refusal(values):
    try:
        token = bearer_token(values or None, 8192)
    except (InvalidToken, BadRequest):
        return
    if token is not None:
        assert token.isascii() and " " not in token and token


@settings(max_examples=200, deadline=None)
@given(st.from_regex(r"[A-Za-z0-9\-._~+/]+=*", fullmatch=True), st.sampled_from(["Bearer", "bearer", "BEARER", "bEaReR"]))
def test_any_b64token_with_any_case_of_the_scheme_is_read(token, scheme):
    assert bearer_token([f"{scheme} {token}".encode()], 8192) == token


async def raw_post(app: Any, headers: list[tuple[bytes, bytes]]) -> tuple[int, dict[bytes, bytes], bytes]:
    """Drive the ASGI app directly, so any header bytes at all reach it."""
    import msgspec

    message = call("whoami")
    body = msgspec.json.encode(message)
    base = [(k.encode(), v.encode()) for k, v in http_headers(message).items()]
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": [
        (b"host", b"127.0.0.1"), *base, *headers], "query_string": b""}
    sent: list[dict[str, Any]] = []
    fed = False

    async def receive() -> dict[str, Any]:
        nonlocal fed
        if not fed:
            fed = True
            return {"type": "http.request", "body": body, "more_body": False}
        await __import__("asyncio").sleep(3600)
        return {"type": "http.disconnect"}

    async def send(event: dict[str, Any]) -> None:
        sent.append(event)

    await app(scope, receive, send)
    start = sent[0]
    return start["status"], dict(start["headers"]), b"".join(e.get("body", b"") for e in sent[1:])


HOSTILE = [
    # (name, Authorization header values, status, error code in the challenge or None)
    ("lowercase scheme", [b"bearer good-token"], 200, None),
    ("uppercase scheme", [b"BEARER good-token"], 200, None),
    ("extra spaces", [b"Bearer    good-token  "], 200, None),
    ("two headers", [b"Bearer good-token", b"Bearer good-token"], 400, "invalid_request"),
    ("token with spaces", [b"Bearer good token"], 401, "invalid_token"),
    ("100 KB token", [b"Bearer " + b"a" * 100_000], 401, "invalid_token"),
    ("non-ASCII", ["Bearer gööd-token".encode()], 401, "invalid_token"),
    ("latin-1 bytes", [b"Bearer \xff\xfe"], 401, "invalid_token"),
    ("NUL byte", [b"Bearer good\x00token"], 401, "invalid_token"),
    ("CR LF", [b"Bearer good\r\nX-Evil: 1"], 401, "invalid_token"),
    ("scheme only", [b"Bearer"], 401, "invalid_token"),
    ("scheme and space", [b"Bearer "], 401, "invalid_token"),
    ("other scheme", [b"Basic YWxpY2U6c2VjcmV0"], 401, None),
    ("empty header", [b""], 401, None),
    ("token68 padding in the middle", [b"Bearer ab=cd"], 401, "invalid_token"),
    ("quoted token", [b'Bearer "good-token"'], 401, "invalid_token"),
    ("a token of another user", [b"Bearer someone-else"], 401, "invalid_token"),
    ("the AS is down", [b"Bearer down"], 503, None),
]


@pytest.mark.parametrize(("name", "values", "status", "error"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_authorization_headers(name, values, status, error):
    app = stub_app()
    status_got, headers, body = run(raw_post(app, [(b"authorization", v) for v in values]))
    assert status_got == status, (name, body)
    import msgspec

    message = msgspec.json.decode(body)
    check(message) if status != 200 else check(message, "tools/call")
    if status in (400, 401):
        challenge = headers[b"www-authenticate"].decode("ascii")
        params = challenge_params(type("R", (), {"headers": {"www-authenticate": challenge}})())
        assert params["resource_metadata"] == METADATA_URL
        assert params.get("error") == error
        for value in values:
            if len(value) > 8:
                assert value[7:] not in body and value[7:] not in headers[b"www-authenticate"]
    assert run(raw_post(app, [(b"authorization", b"Bearer good-token")]))[0] == 200  # still serving


def test_challenges_never_carry_offline_access_or_quotes():
    header = www_authenticate(METADATA_URL, ("a", "offline_access", "b"), error="insufficient_scope",
                              description='say "hi" \\ there')
    assert header == (b'Bearer error="insufficient_scope", scope="a b", resource_metadata="'
                      + METADATA_URL.encode() + b'", error_description="say hi  there"')


# -- caching, hierarchy, binding ----------------------------------------------------------------------


def test_a_custom_verifier_is_asked_once_per_token_while_its_cache_ttl_lasts():
    rs = ResourceServer(resource=RESOURCE, issuer=ISSUER, verifier=StubVerifier())
    for _ in range(3):
        assert run(rs.authenticate("good-token")).subject == "alice"
    assert rs.verifier.calls == 1  # type: ignore[attr-defined]
    with pytest.raises(InvalidToken, match="^The access token is invalid$"):
        run(rs.authenticate("bad"))
    with pytest.raises(InvalidToken, match="^The access token is invalid$"):
        run(rs.authenticate("bad"))
    assert rs.verifier.calls == 3  # type: ignore[attr-defined]  # refusals are never cached


def test_the_cache_is_bounded_and_keyed_by_digest_only():
    from rondo.auth.cache import TokenCache

    cache = TokenCache(size=2)
    p = Principal.from_claims({"sub": "a", "exp": time.time() + 60})
    for token in ("t1", "t2", "t3"):
        cache.put(cache.digest(token), p, 60)
    assert len(cache) == 2 and cache.get(cache.digest("t1")) is None
    assert all(isinstance(k, bytes) and len(k) == 32 for k in cache._entries)
    expired = Principal.from_claims({"sub": "a", "exp": time.time() - 1})
    cache.put(cache.digest("old"), expired, 60)
    assert cache.get(cache.digest("old")) is None


def test_scope_hierarchy_as_a_mapping_is_transitive_and_as_a_callable_is_called():
    expand = expander({"admin": ["files:write"], "files:write": ["files:read"]})
    assert expand(frozenset({"admin"})) == {"admin", "files:write", "files:read"}
    assert expand(frozenset({"files:read"})) == {"files:read"}
    expand = expander(lambda granted: {s.split(":")[0] + ":read" for s in granted if s.endswith(":write")})
    assert expand(frozenset({"notes:write"})) == {"notes:write", "notes:read"}


def test_principal_binding_names_issuer_and_user_or_client():
    user = Principal.from_claims({"sub": "alice", "iss": ISSUER, "client_id": "c"})
    machine = Principal.from_claims({"iss": ISSUER, "client_id": "c"})
    other_issuer = Principal.from_claims({"sub": "alice", "iss": "https://other.example/"})
    assert len({user.binding, machine.binding, other_issuer.binding}) == 3
    assert Principal.from_claims({"scp": ["a", "b"]}).scopes == {"a", "b"}
    with pytest.raises(TypeError, match="verified claims are read-only"):
        user.claims["sub"] = "mallory"  # type: ignore[index]
    with pytest.raises(TypeError, match="verified claims are read-only"):
        user.claims.update(sub="mallory")  # type: ignore[attr-defined]
    import msgspec

    assert msgspec.json.decode(msgspec.json.encode(user.claims))["sub"] == "alice"


def test_state_policy_binds_the_verified_principal_by_default():
    from rondo.auth import principal_of

    policy = rondo.StatePolicy(secret=b"s" * 32)
    server = rondo.Server("s", state=policy)
    alice = Principal.from_claims({"sub": "alice", "iss": ISSUER})
    ctx = rondo.Context(server, request_method="tools/call", request_params={"name": "t"}, auth=alice)
    assert policy.principal_of(ctx) == alice.binding == principal_of(ctx)
    token = policy.seal_for(ctx, {"n": 1})
    bob = rondo.Context(server, request_method="tools/call", request_params={"name": "t"},
                        auth=Principal.from_claims({"sub": "bob", "iss": ISSUER}))
    with pytest.raises(rondo.McpError, match="^Invalid requestState: ") as info:
        policy.open_for(bob, token)
    assert info.value.code == -32602
    assert policy.open_for(ctx, token) == {"n": 1}
    # Authentication that is not rondo.auth's (an ASGI scope's own `auth`) binds nothing.
    other = rondo.Context(server, request_method="tools/call", request_params={"name": "t"}, auth="x")
    assert policy.principal_of(other) is None


# -- tokens from anywhere --------------------------------------------------------------------------

_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def _segment(value: Any) -> str:
    import base64
    import json

    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


@settings(max_examples=300, deadline=None)
@given(
    header=st.one_of(_JSONISH, st.fixed_dictionaries(
        {"alg": st.sampled_from(["RS256", "none", "HS256", "ES256", "PS512", "x"])},
        optional={"kid": _JSONISH, "typ": _JSONISH})),
    claims=st.one_of(_JSONISH, st.fixed_dictionaries(
        {"iss": st.sampled_from(["https://untrusted.example", 7, None])},
        optional={"aud": _JSONISH, "exp": _JSONISH, "nbf": _JSONISH, "scope": _JSONISH})),
    signature=st.text(alphabet="abcXYZ019-_", max_size=40),
)
def test_a_jwt_of_any_shape_is_refused_with_invalid_token_never_a_crash(header, claims, signature):
    """Untrusted issuers never reach the network, so every such token must be InvalidToken."""
    from rondo.auth import JwtVerifier

    verifier = JwtVerifier(ISSUER, RESOURCE)
    token = f"{_segment(header)}.{_segment(claims)}.{signature}"
    refusal = ("^The access token (is not a JWT|uses (a signing algorithm|JWS header parameters) this server "
               "refuses|was not issued by a trusted authorization server)$")
    with pytest.raises(InvalidToken, match=refusal) as info:
        run(verifier.verify(token))
    assert token not in info.value.description and token not in info.value.reason


def test_server_wide_scopes_hold_for_legacy_initialize_too():
    rs = ResourceServer(resource=RESOURCE, issuer=ISSUER, verifier=StubVerifier(),
                        required_scopes=["mcp:use", "mcp:admin"])
    app = protected_server(rs).asgi()
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}

    async def go() -> Any:
        from tests.helpers.helpers_core import asgi_client

        async with asgi_client(app) as client:
            return await client.post("/mcp", json=init, headers={
                "content-type": "application/json", "accept": "application/json, text/event-stream",
                "authorization": "Bearer good-token"})

    response = run(go())
    assert response.status_code == 403 and "mcp-session-id" not in response.headers
    assert challenge_params(response)["scope"] == "mcp:use mcp:admin"


def test_resource_templates_take_scopes_and_lists_hide_them():
    rs = ResourceServer(resource=RESOURCE, issuer=ISSUER, verifier=StubVerifier())
    server = rondo.Server("t", auth=rs, state=None)

    @server.resource("notes://{id}", scopes=["notes:read"])
    def note(id: str) -> str:
        return f"note {id}"

    @server.resource("public://readme")
    def readme() -> str:
        return "hi"

    app = server.asgi()

    async def go(message: dict[str, Any]) -> Any:
        from tests.helpers.helpers_core import asgi_client

        async with asgi_client(app) as client:
            return await client.post("/mcp", json=message, headers={
                **http_headers(message), "authorization": "Bearer good-token"})

    from tests.helpers.helpers_core import request

    read = run(go(request("resources/read", {"uri": "notes://42"})))
    assert read.status_code == 403 and challenge_params(read)["scope"] == "notes:read"
    assert run(go(request("resources/read", {"uri": "public://readme"}))).status_code == 200
    templates = run(go(request("resources/templates/list"))).json()["result"]
    assert templates["resourceTemplates"] == [] and templates["cacheScope"] == "private"
    assert [r["uri"] for r in run(go(request("resources/list"))).json()["result"]["resources"]] == [
        "public://readme"]
    server.remove_resource("notes://{id}")
    assert ("resource", "notes://{id}") not in server.component_scopes


def test_an_endpoint_path_that_differs_from_the_resource_url_is_reported_at_start_up(caplog):
    rs = ResourceServer(resource=RESOURCE, issuer=ISSUER, verifier=StubVerifier())
    with caplog.at_level("WARNING", logger="rondo.auth"):
        rondo.Server("a", auth=rs, state=None).asgi(path="/other")
    assert "names path '/mcp'" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="rondo.auth"):
        rondo.Server("b", auth=rs, state=None).asgi()
    assert caplog.text == ""


def test_a_token_naming_no_subject_and_no_client_is_refused():
    """Such callers would all share one binding (one user's state would open for another)."""

    class Nameless:
        cache_ttl = 60.0

        async def verify(self, token: str) -> Principal:
            return Principal.from_claims({"iss": ISSUER, "scope": "mcp:use"})

    rs = ResourceServer(resource=RESOURCE, issuer=ISSUER, verifier=Nameless())
    with pytest.raises(InvalidToken, match="no subject or client"):
        run(rs.authenticate("anything"))
    assert len(rs.cache) == 0
