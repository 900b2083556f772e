"""Client authorization against an in-memory resource server and authorization server
(tests/helpers/auth_world.py): discovery, identity, PKCE, iss, scopes, step-up, refresh, stores, and
every hostile case ending in a clear exception within bounded time."""

from __future__ import annotations

import asyncio
import os
import stat
import time
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rondo.client import (
    AuthError,
    AuthorizationDenied,
    ClientCredentials,
    DiscoveryError,
    EnterpriseAuth,
    FileTokenStore,
    HeadlessRedirect,
    InsufficientScope,
    JwtBearer,
    MemoryTokenStore,
    OAuth,
    RegistrationError,
    TokenError,
)
from rondo.client.auth.challenge import bearer_challenge, parse_challenges
from rondo.client.auth.discovery import (
    resource_covers,
    resource_metadata_urls,
    server_metadata_urls,
)
from rondo.client.auth.redirect import RedirectHandler, callback_params
from tests.helpers.auth_world import ISSUER, MCP, REDIRECT, World, rpc


def oauth(world: World, **kwargs: Any) -> OAuth:
    kwargs.setdefault("redirect", HeadlessRedirect(REDIRECT, transport=world.transport()))
    return OAuth(transport=world.transport(), timeout=2.0, **kwargs)


async def post(world: World, auth: httpx.Auth, method: str = "tools/list") -> httpx.Response:
    async with httpx.AsyncClient(transport=world.transport(), auth=auth) as http:
        return await http.post(MCP, json=rpc(method))


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 15))


# -- parsing and URL rules --------------------------------------------------------------------

def test_challenge_parsing() -> None:
    (c,) = parse_challenges(['Bearer realm="x", scope="a b", resource_metadata="https://m/x", error=insufficient_scope'])
    assert c.scheme == "bearer" and c.scopes == ["a", "b"] and c.get("error") == "insufficient_scope"
    many = parse_challenges(['Basic realm="r", Bearer scope="s\\"q", DPoP algs="ES256"'])
    assert [x.scheme for x in many] == ["basic", "bearer", "dpop"]
    assert many[1].get("scope") == 's"q'
    assert bearer_challenge(["Negotiate abc==", 'Bearer scope="z"']).scopes == ["z"]  # type: ignore[union-attr]
    assert bearer_challenge(["Basic realm=x"]) is None


@given(st.text(max_size=300))
def test_challenge_parser_never_raises(text: str) -> None:
    for challenge in parse_challenges([text]):
        assert challenge.scheme and challenge.scheme == challenge.scheme.lower()


def test_well_known_orders() -> None:
    assert resource_metadata_urls("https://e.x/public/mcp") == [
        "https://e.x/.well-known/oauth-protected-resource/public/mcp", "https://e.x/.well-known/oauth-protected-resource"]
    assert resource_metadata_urls("https://e.x") == ["https://e.x/.well-known/oauth-protected-resource"]
    assert server_metadata_urls("https://a.x/tenant1") == [
        "https://a.x/.well-known/oauth-authorization-server/tenant1",
        "https://a.x/.well-known/openid-configuration/tenant1",
        "https://a.x/tenant1/.well-known/openid-configuration"]
    assert server_metadata_urls("https://a.x") == [
        "https://a.x/.well-known/oauth-authorization-server", "https://a.x/.well-known/openid-configuration"]


@pytest.mark.parametrize(("resource", "ok"), [
    ("https://mcp.test/mcp", True), ("https://mcp.test", True), ("HTTPS://MCP.TEST:443/mcp", True),
    ("https://mcp.test/mc", False), ("https://evil.test/mcp", False), ("http://mcp.test/mcp", False),
    ("https://mcp.test/mcp/deeper", False), ("https://mcp.test/mcp#f", False), ("mcp.test/mcp", False),
])
def test_resource_covers(resource: str, ok: bool) -> None:
    assert resource_covers(resource, MCP) is ok


# -- the authorization code flow --------------------------------------------------------------

def test_full_sign_in_with_registration_pkce_and_resource() -> None:
    world = World(as_scopes=["mcp:use", "offline_access"])
    auth = oauth(world)
    response = run(post(world, auth))
    assert response.status_code == 200 and response.json()["result"]["ok"]
    (reg,) = world.seen("/register")
    assert reg.body["application_type"] == "native" and "refresh_token" in reg.body["grant_types"]
    assert reg.body["redirect_uris"] == [REDIRECT]
    (authz,) = world.seen("/authorize")
    q = httpx.URL(authz.url).params
    assert q["code_challenge_method"] == "S256" and q["resource"] == MCP
    assert q["scope"] == "mcp:use offline_access" and q["client_id"] == "client-1"
    (tok,) = world.seen("/token")
    assert tok.form["resource"] == MCP and tok.form["grant_type"] == "authorization_code"
    # The second request reuses the token: no new sign-in.
    assert run(post(world, auth)).status_code == 200
    assert len(world.seen("/authorize")) == 1


def test_scope_falls_back_to_scopes_supported_then_omitted() -> None:
    world = World(challenge_scope=None, scopes_supported=["a", "b"])
    run(post(world, oauth(world)))
    assert httpx.URL(world.seen("/authorize")[0].url).params["scope"] == "a b"
    world = World(challenge_scope=None)
    run(post(world, oauth(world)))
    assert "scope" not in httpx.URL(world.seen("/authorize")[0].url).params


def test_offline_access_not_requested_when_unsupported() -> None:
    world = World(refresh=False, as_scopes=["mcp:use"])
    run(post(world, oauth(world)))
    assert "offline_access" not in httpx.URL(world.seen("/authorize")[0].url).params["scope"]
    assert "refresh_token" not in world.seen("/register")[0].body["grant_types"]


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post", "none"])
def test_token_endpoint_auth_method(method: str) -> None:
    world = World(auth_methods=[method])
    run(post(world, oauth(world)))
    (tok,) = world.seen("/token")
    assert tok.headers.get("authorization", "").startswith("Basic ") is (method == "client_secret_basic")
    assert ("client_secret" in tok.form) is (method == "client_secret_post")


def test_client_id_metadata_document_instead_of_registration() -> None:
    world = World(cimd=True)
    run(post(world, oauth(world, client_metadata_url="https://app.example/client.json")))
    assert not world.seen("/register")
    assert httpx.URL(world.seen("/authorize")[0].url).params["client_id"] == "https://app.example/client.json"


def test_pre_registered_client_is_bound_to_its_issuer() -> None:
    world = World(registration=False, auth_methods=["client_secret_basic"])
    run(post(world, oauth(world, client_id="pre", client_secret="s3cret", client_issuer=ISSUER)))
    assert world.seen("/token")[0].headers["authorization"].startswith("Basic ")
    other = World(registration=False, issuer="https://other.test")
    with pytest.raises(RegistrationError, match="not reusing"):
        run(post(other, oauth(other, client_id="pre", client_secret="s3cret", client_issuer=ISSUER)))
    assert not other.seen("/authorize")


def test_no_identity_possible_is_a_clear_error() -> None:
    world = World(registration=False)
    with pytest.raises(RegistrationError, match="client_id="):
        run(post(world, oauth(world)))


def test_step_up_requests_the_union_of_scopes() -> None:
    world = World(tool_scope="files:write")
    auth = oauth(world)
    assert run(post(world, auth)).status_code == 200
    response = run(post(world, auth, "tools/call"))
    assert response.status_code == 200
    assert response.json()["result"]["scopes"] == ["mcp:use", "files:write"]
    scopes = [httpx.URL(s.url).params["scope"] for s in world.seen("/authorize")]
    assert scopes == ["mcp:use", "mcp:use files:write"]


def test_step_up_is_bounded() -> None:
    world = World(tool_scope="never")
    world.refresh = False

    async def grant_nothing() -> None:
        auth = oauth(world, max_attempts=3)
        await post(world, auth, "tools/call")

    # The AS grants what is asked, so make "never" impossible to hold: drop it from every token.
    original = world.auth_server

    async def stingy(request: httpx.Request, url: httpx.URL, form: dict[str, str], body: Any) -> httpx.Response:
        response = await original(request, url, form, body)
        for scopes in world.valid.values():
            if "never" in scopes:
                scopes.remove("never")
        return response

    world.auth_server = stingy  # type: ignore[method-assign]
    with pytest.raises(InsufficientScope, match="403 insufficient_scope after 3"):
        run(grant_nothing())
    assert len(world.seen("/authorize")) == 3


def test_endless_401_is_bounded() -> None:
    world = World(always_401=True)
    with pytest.raises(AuthError, match="still answers 401"):
        run(post(world, oauth(world, max_attempts=2)))  # run: a 15 s hang guard
    # Bounded by count: one sign-in, then the request and its max_attempts=2 retries, no more.
    assert len(world.seen("/authorize")) == 1 and len(world.seen("/mcp")) == 3


# -- RFC 9207 iss and metadata validation -----------------------------------------------------

@pytest.mark.parametrize(("supported", "value", "accepted"), [
    (True, "correct", True), (True, None, False), (True, "https://evil.test", False),
    (True, ISSUER + "/", False), (False, None, True), (False, "https://evil.test", False),
    (False, "correct", True),
])
def test_iss_table(supported: bool, value: str | None, accepted: bool) -> None:
    world = World(iss_supported=supported, iss_value=value)
    if accepted:
        assert run(post(world, oauth(world))).status_code == 200
    else:
        with pytest.raises(AuthorizationDenied, match="iss|issuer"):
            run(post(world, oauth(world)))
        assert not world.seen("/token")  # the code never reached a token endpoint


def test_metadata_issuer_mismatch_is_refused() -> None:
    world = World(metadata_issuer="https://attacker.test")
    with pytest.raises(DiscoveryError, match="refusing to use it"):
        run(post(world, oauth(world)))
    assert not world.seen("/register") and not world.seen("/authorize")


def test_resource_mismatch_is_refused_before_authorization() -> None:
    world = World(resource="https://evil.test/mcp")
    with pytest.raises(DiscoveryError, match="not https://mcp.test/mcp"):
        run(post(world, oauth(world)))
    assert not world.seen("/authorize")


def test_path_suffixed_prm_is_probed_without_a_header_hint() -> None:
    world = World(prm_in_header=False)
    assert run(post(world, oauth(world))).status_code == 200
    assert world.seen("/.well-known/oauth-protected-resource/mcp")
    assert not world.seen("/.well-known/oauth-protected-resource")


def test_huge_metadata_is_refused() -> None:
    world = World(prm_huge=True)
    with pytest.raises(DiscoveryError, match="larger than"):
        run(post(world, oauth(world)))


def test_slow_metadata_times_out() -> None:
    world = World(prm_slow=True)
    # The message names the 1 s discovery timeout: that, not run()'s 15 s hang guard, ended it.
    with pytest.raises(DiscoveryError, match="within 1 s"):
        run(post(world, OAuth(redirect=HeadlessRedirect(REDIRECT), transport=world.transport(), timeout=1.0)))


# -- tokens: refresh, stores, secrecy ---------------------------------------------------------

def test_refresh_before_expiry() -> None:
    world = World(expires_in=30)
    auth = oauth(world)  # refresh margin 60 s > 30 s lifetime: every later request refreshes first
    run(post(world, auth))
    assert run(post(world, auth)).status_code == 200
    grants = [s.form["grant_type"] for s in world.seen("/token")]
    assert grants == ["authorization_code", "refresh_token"]
    assert world.seen("/token")[1].form["resource"] == MCP
    assert len(world.seen("/authorize")) == 1


def test_refresh_on_401() -> None:
    world = World()
    auth = oauth(world)
    run(post(world, auth))
    world.valid.clear()  # the server forgets every access token (revoked, restarted)
    assert run(post(world, auth)).status_code == 200
    assert [s.form["grant_type"] for s in world.seen("/token")] == ["authorization_code", "refresh_token"]


def test_failed_refresh_falls_back_to_sign_in() -> None:
    world = World()
    auth = oauth(world)
    run(post(world, auth))
    world.valid.clear()
    world.refresh_tokens.clear()
    assert run(post(world, auth)).status_code == 200
    assert len(world.seen("/authorize")) == 2


def test_file_store_is_private_and_survives_a_new_client(tmp_path: Any) -> None:
    path = tmp_path / "state" / "tokens.json"
    world = World()
    run(post(world, oauth(world, store=FileTokenStore(path))))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    # A new OAuth object (a new process) sends the stored token straight away.
    before = len(world.log)
    assert run(post(world, oauth(world, store=FileTokenStore(path)))).status_code == 200
    assert len(world.log) == before + 1


def test_tokens_never_appear_in_reprs_or_errors(caplog: Any) -> None:
    world = World()
    store = MemoryTokenStore()
    with caplog.at_level("DEBUG"):
        run(post(world, oauth(world, store=store)))
    from rondo.client.auth.tokens import Token
    token = Token.from_json(next(v for k, v in store._data.items() if k.startswith("token ")))
    assert token is not None and token.access_token not in repr(token)
    assert token.refresh_token is not None and token.refresh_token not in repr(token)
    assert all(token.access_token not in r.getMessage() for r in caplog.records)


# -- client credentials ------------------------------------------------------------------------

def test_client_credentials_with_secret() -> None:
    world = World(auth_methods=["client_secret_basic"], challenge_scope="svc")
    auth = ClientCredentials("svc-client", client_secret="pw", transport=world.transport())
    assert run(post(world, auth)).status_code == 200
    (tok,) = world.seen("/token")
    assert tok.form["grant_type"] == "client_credentials" and tok.form["scope"] == "svc"
    assert tok.form["resource"] == MCP and tok.headers["authorization"].startswith("Basic ")


def test_client_credentials_with_private_key_jwt() -> None:
    import jwt  # the auth extra (PyJWT); the dev extra installs it
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    world = World(auth_methods=["private_key_jwt"])
    auth = ClientCredentials("svc", private_key=pem, signing_algorithm="ES256", transport=world.transport())
    assert run(post(world, auth)).status_code == 200
    form = world.seen("/token")[0].form
    assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    claims = jwt.decode(form["client_assertion"], key.public_key(), algorithms=["ES256"], audience=ISSUER)
    assert claims["iss"] == claims["sub"] == "svc" and claims["exp"] > time.time()


def test_misconfiguration_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="needs exactly one of client_secret and private_key"):
        ClientCredentials("x")
    with pytest.raises(ValueError, match="PEM"):
        ClientCredentials("x", private_key="not a key")
    with pytest.raises(ValueError, match="https"):
        OAuth(client_metadata_url="http://app/client.json")
    with pytest.raises(ValueError, match="client_secret needs client_id"):
        OAuth(client_secret="s")


# -- assertion grants ---------------------------------------------------------------------------

def test_jwt_bearer_workload_identity() -> None:
    world = World()
    calls: list[tuple[str, str]] = []

    async def platform_token(issuer: str, resource: str) -> str:
        calls.append((issuer, resource))
        return "good-jwt"

    auth = JwtBearer(platform_token, client_id="workload", transport=world.transport())
    assert run(post(world, auth)).status_code == 200
    assert calls == [(ISSUER, MCP)]
    (tok,) = world.seen("/token")
    assert tok.form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert tok.form["client_id"] == "workload" and tok.form["resource"] == MCP


def test_jwt_bearer_refusal_is_final() -> None:
    world = World()
    with pytest.raises(TokenError, match="invalid_grant"):
        run(post(world, JwtBearer("expired-jwt", transport=world.transport())))
    assert len(world.seen("/token")) == 1  # no retry, no other grant


def test_enterprise_managed_authorization() -> None:
    world = World(auth_methods=["client_secret_basic"])
    auth = EnterpriseAuth(id_token="user-id-token", idp_token_endpoint="https://idp.test/token",
                          idp_client_id="idp-client", client_id="mcp-client", client_secret="pw",
                          transport=world.transport())
    assert run(post(world, auth)).status_code == 200
    exchange = next(s for s in world.log if s.url == "https://idp.test/token")
    assert exchange.form["requested_token_type"] == "urn:ietf:params:oauth:token-type:id-jag"
    assert exchange.form["audience"] == ISSUER and exchange.form["resource"] == MCP
    (tok,) = world.seen("/token")[-1:]
    assert tok.form["assertion"] == "id-jag-for-" + MCP and tok.headers["authorization"].startswith("Basic ")


# -- DPoP -------------------------------------------------------------------------------------

@pytest.mark.parametrize("nonce", [None, "server-nonce-1"])
def test_dpop_bound_tokens_with_fresh_proofs(nonce: str | None) -> None:
    world = World(dpop=True, dpop_nonce=nonce)
    auth = oauth(world, dpop=True)
    assert run(post(world, auth)).status_code == 200
    assert run(post(world, auth)).status_code == 200
    mcp_calls = [s for s in world.log if s.url == MCP and s.headers.get("authorization", "").startswith("DPoP ")]
    proofs = [s.headers["dpop"] for s in mcp_calls]
    assert len(proofs) == len(set(proofs)) >= 2  # a fresh proof every time
    assert all("authorization" in s.headers and s.headers["authorization"].startswith("DPoP ") for s in mcp_calls)
    token_calls = world.seen("/token")
    assert all(s.headers.get("dpop") for s in token_calls)
    assert len(token_calls) == (2 if nonce else 1)  # one retry with the AS's nonce


def test_dpop_not_used_when_the_server_does_not_offer_it() -> None:
    world = World()
    assert run(post(world, oauth(world, dpop=True))).status_code == 200
    assert not world.seen("/token")[0].headers.get("dpop")
    assert world.log[-1].headers["authorization"].startswith("Bearer ")


# -- the authorization response ------------------------------------------------------------------

def _answering(world: World, rewrite: Any) -> OAuth:
    """An OAuth whose "browser" returns the AS's redirect rewritten by `rewrite(url)`."""
    headless = HeadlessRedirect(REDIRECT, transport=world.transport())

    async def browser(url: str) -> str:
        return rewrite(await headless.authorize(url))

    return oauth(world, redirect=RedirectHandler(REDIRECT, browser))


def test_wrong_state_is_refused() -> None:
    world = World()
    with pytest.raises(AuthorizationDenied, match="wrong state"):
        run(post(world, _answering(world, lambda u: u.replace("state=", "state=x"))))
    assert not world.seen("/token")


def test_iss_is_checked_before_any_error_is_read() -> None:
    world = World(iss_value="https://evil.test")
    rewrite = lambda u: u.split("?")[0] + "?" + u.split("?")[1].replace("code=", "error=access_denied&x=")  # noqa: E731
    with pytest.raises(AuthorizationDenied, match="comes from issuer 'https://evil.test', not "
                       "'https://as.test': refused$") as caught:
        run(post(world, _answering(world, rewrite)))
    assert "evil.test" in str(caught.value) and "access_denied" not in str(caught.value)


def test_oauth_error_response_is_reported() -> None:
    world = World(iss_value=None, iss_supported=False)
    rewrite = lambda u: u.replace("code=", "error=access_denied&ignored=")  # noqa: E731
    with pytest.raises(AuthorizationDenied, match="access_denied"):
        run(post(world, _answering(world, rewrite)))


def test_callback_must_come_back_to_the_redirect_uri() -> None:
    with pytest.raises(AuthorizationDenied, match="another URL"):
        callback_params("http://127.0.0.1:4000/elsewhere?code=x&state=y", REDIRECT)
    with pytest.raises(AuthorizationDenied, match="repeats"):
        callback_params(REDIRECT + "?code=a&code=b&state=s", REDIRECT)
    assert callback_params(REDIRECT + "?code=a&state=s", REDIRECT) == {"code": "a", "state": "s"}


def test_a_corrupt_token_file_is_a_clear_error(tmp_path: Any) -> None:
    path = tmp_path / "tokens.json"
    path.write_text("not json")
    world = World()
    with pytest.raises(AuthError, match="not a rondo token store"):
        run(post(world, oauth(world, store=FileTokenStore(path))))
    assert path.read_text() == "not json"


def test_plain_http_authorization_servers_only_on_loopback() -> None:
    world = World(issuer="http://as.test")
    with pytest.raises(DiscoveryError, match="no usable authorization server"):
        run(post(world, oauth(world)))
    assert not world.seen("/.well-known/oauth-authorization-server")


def test_a_session_delete_never_signs_in() -> None:
    world = World()

    async def delete() -> int:
        async with httpx.AsyncClient(transport=world.transport(), auth=oauth(world)) as http:
            return (await http.delete(MCP)).status_code

    assert run(delete()) == 401 and not world.seen("/authorize")


def test_requests_reuse_the_token_without_reading_the_store() -> None:
    world = World()

    class Counting(MemoryTokenStore):
        reads = 0

        async def get(self, key: str) -> Any:
            Counting.reads += 1
            return await super().get(key)

    auth = oauth(world, store=Counting())
    run(post(world, auth))
    before = Counting.reads
    for _ in range(3):
        run(post(world, auth))
    assert Counting.reads == before


# -- properties of the parsers that read what servers send ---------------------------------------

@given(st.dictionaries(st.sampled_from(["access_token", "token_type", "expires_at", "refresh_token", "scope",
                                        "issuer", "resource", "jkt", "other"]),
                       st.one_of(st.none(), st.integers(), st.text(max_size=20), st.lists(st.integers(), max_size=2))))
def test_stored_token_reading_never_raises(data: dict[str, Any]) -> None:
    from rondo.client.auth.tokens import Token

    token = Token.from_json(data)
    if token is not None:  # a token read back is well-typed, so using it cannot crash
        assert isinstance(token.access_token, str) and token.access_token
        token.expires_within(60)
        assert isinstance(token.scopes, list) and repr(token)


@given(st.text(max_size=200))
def test_callback_parsing_either_parses_or_refuses(query: str) -> None:
    try:
        params = callback_params(REDIRECT + "?" + query, REDIRECT)
    except AuthorizationDenied:
        return
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in params.items())


def test_auth_is_for_http_targets_only() -> None:
    from rondo.client import Client

    with pytest.raises(ValueError, match="auth= applies to HTTP targets"):
        Client("python -c pass", auth=OAuth())
