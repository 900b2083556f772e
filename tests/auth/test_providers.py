"""Provider presets (rondo.auth.facade.providers): each builds the provider's endpoints, scopes
and quirks; reads the user from a sample userinfo / user API document; OpenID ones verify the
ID token (locally minted keys, served through a fake of the facade's bounded HTTP); every bad
setting is a ValueError at construction, every bad token an UpstreamError."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from rondo.auth.facade import Identity, Upstream, UpstreamError, UpstreamTokens, providers
from tests.helpers.facade_world import FakeHttp

SECRET = "the-facades-secret-at-the-provider"
RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
OTHER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())
NONCE = "the-nonce-the-facade-sent-with-this-sign-in"


def jwk(key: Any, kid: str) -> dict[str, Any]:
    algorithm = RSAAlgorithm if isinstance(key, rsa.RSAPrivateKey) else ECAlgorithm
    out: dict[str, Any] = algorithm.to_jwk(key.public_key(), as_dict=True)
    return {**out, "kid": kid, "use": "sig"}


def provider_docs(upstream: Upstream, keys: list[dict[str, Any]],
                  userinfo: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    issuer = upstream.issuer
    assert issuer is not None
    jwks_uri = issuer.rstrip("/") + "/jwks"
    docs = {issuer.rstrip("/") + "/.well-known/openid-configuration":
            {"issuer": issuer, "jwks_uri": jwks_uri}, jwks_uri: {"keys": keys}}
    if userinfo is not None and upstream.userinfo_url is not None:
        docs[upstream.userinfo_url] = userinfo
    return docs


def id_token(upstream: Upstream, *, key: Any = RSA_KEY, kid: str = "k1", alg: str = "RS256",
             headers: dict[str, Any] | None = None, **claims: Any) -> str:
    now = int(time.time())
    payload = {"iss": upstream.issuer, "aud": upstream.client_id, "sub": "user-1", "iat": now,
               "exp": now + 300, "nonce": NONCE, **claims}
    payload = {k: v for k, v in payload.items() if v is not None}
    return jwt.encode(payload, key, algorithm=alg, headers={"kid": kid, **(headers or {})})


def read(upstream: Upstream, http: FakeHttp, token: str | None,
         access: str = "upstream-access", nonce: str | None = NONCE,
         scope: str | None = None) -> Identity:
    assert upstream.identity is not None
    tokens = UpstreamTokens(access_token=access, id_token=token, nonce=nonce, scope=scope)
    return asyncio.run(upstream.identity(http, tokens, upstream))


# -- GitHub ---------------------------------------------------------------------------------------


def test_github_is_oauth2_with_its_user_api_as_identity() -> None:
    up = providers.github(client_id="Iv1.abc", client_secret=SECRET, scopes=["repo"])
    assert (up.authorize_url, up.token_url, up.userinfo_url) == (
        "https://github.com/login/oauth/authorize", "https://github.com/login/oauth/access_token",
        "https://api.github.com/user")
    assert up.issuer is None and up.scopes == ("read:user", "repo")
    assert up.token_auth == "client_secret_post" and up.subject_claim == "id"
    http = FakeHttp({"https://api.github.com/user": {
        "id": 583231, "login": "octocat", "name": "The Octocat", "email": None,
        "type": "User", "site_admin": False}})
    who = read(up, http, None, access="gho_opaque")
    assert who == Identity(subject="583231", claims={"id": 583231, "login": "octocat",
                                                     "name": "The Octocat", "email": None,
                                                     "type": "User"})
    [(url, headers)] = http.gets
    assert headers["authorization"] == "Bearer gho_opaque"
    assert headers["accept"] == "application/vnd.github+json"
    assert SECRET not in repr(up)


@pytest.mark.parametrize("user", [{"login": "x"}, {"id": True, "login": "x"}, {"id": "7", "login": "x"},
                                  {"id": 7}])
def test_github_without_a_numeric_id_and_a_login_is_refused(user: dict[str, Any]) -> None:
    up = providers.github(client_id="Iv1.abc", client_secret=SECRET)
    with pytest.raises(UpstreamError, match="GitHub's /user has no"):
        read(up, FakeHttp({"https://api.github.com/user": user}), None)


GITHUB_USER = {"id": 583231, "login": "octocat", "name": "The Octocat",
               "email": "public@example.com", "type": "User"}


@pytest.mark.parametrize(("emails", "email", "verified"), [
    ([{"email": "old@example.com", "primary": False, "verified": True},
      {"email": "octo@example.com", "primary": True, "verified": True, "visibility": "private"}],
     "octo@example.com", True),
    # A primary address not verified is not given as the user's email.
    ([{"email": "unverified@example.com", "primary": True, "verified": False}],
     "public@example.com", False),
    ([], "public@example.com", False),
    # Garbage entries are skipped, not fatal.
    ([1, "x", {"email": 7, "primary": True, "verified": True}, {"primary": True, "verified": True},
      {"email": "ok@example.com", "primary": True, "verified": "yes"}], "public@example.com", False),
])
def test_github_reads_the_primary_verified_email_when_user_email_is_granted(
        emails: list[Any], email: str, verified: bool) -> None:
    up = providers.github(client_id="Iv1.abc", client_secret=SECRET, scopes=["user:email"])
    assert up.scopes == ("read:user", "user:email")
    http = FakeHttp({"https://api.github.com/user": GITHUB_USER,
                     "https://api.github.com/user/emails": emails})
    who = read(up, http, None, access="gho_opaque", scope="read:user,user:email")
    assert who.claims["email"] == email and who.claims["email_verified"] is verified
    url, headers = http.gets[1]
    assert url == "https://api.github.com/user/emails"
    assert headers["authorization"] == "Bearer gho_opaque"


def test_github_reads_no_emails_unless_the_scope_was_granted() -> None:
    up = providers.github(client_id="Iv1.abc", client_secret=SECRET, scopes=["user:email"])
    http = FakeHttp({"https://api.github.com/user": GITHUB_USER})
    who = read(up, http, None, scope="read:user")  # asked for, but the user did not grant it
    assert [u for u, _ in http.gets] == ["https://api.github.com/user"]
    assert who.claims["email"] == "public@example.com" and "email_verified" not in who.claims


def test_github_emails_that_are_not_an_array_end_the_sign_in() -> None:
    up = providers.github(client_id="Iv1.abc", client_secret=SECRET, scopes=["user:email"])
    http = FakeHttp({"https://api.github.com/user": GITHUB_USER,
                     "https://api.github.com/user/emails": {"message": "Bad credentials"}})
    with pytest.raises(UpstreamError, match="not an array"):
        read(up, http, None, scope="user:email")


def test_github_enterprise_server_lives_on_its_own_host() -> None:
    up = providers.github(client_id="c", client_secret=SECRET, host="GitHub.Example.com")
    assert up.authorize_url == "https://github.example.com/login/oauth/authorize"
    assert up.userinfo_url == "https://github.example.com/api/v3/user"


# -- OpenID providers -------------------------------------------------------------------------------


TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"


def test_google_asks_for_a_refresh_token_and_reads_the_verified_id_token() -> None:
    up = providers.google(client_id="123.apps.googleusercontent.com", client_secret=SECRET)
    assert up.issuer == "https://accounts.google.com"
    assert up.token_url == "https://oauth2.googleapis.com/token"
    assert dict(up.extra_authorize_params) == {"access_type": "offline", "prompt": "consent"}
    assert up.scopes == ("openid", "email", "profile")
    http = FakeHttp(provider_docs(up, [jwk(RSA_KEY, "k1")], {
        "sub": "user-1", "email": "ann@example.com", "email_verified": True, "name": "Ann"}))
    who = read(up, http, id_token(up))
    assert who.subject == "user-1" and who.claims["email"] == "ann@example.com"
    assert who.claims["iss"] == "https://accounts.google.com"
    assert http.gets[-1] == (up.userinfo_url, {"authorization": "Bearer upstream-access"})
    assert providers.google(client_id="c", client_secret=SECRET,
                            offline=False).extra_authorize_params == {}


def test_google_hosted_domain_is_sent_and_enforced_on_the_id_token() -> None:
    up = providers.google(client_id="c", client_secret=SECRET, hosted_domain="example.com")
    assert up.extra_authorize_params["hd"] == "example.com"
    docs = provider_docs(up, [jwk(RSA_KEY, "k1")], {"sub": "user-1"})
    assert read(up, FakeHttp(docs), id_token(up, hd="example.com")).subject == "user-1"
    for other in ("evil.example", None):
        with pytest.raises(UpstreamError, match="not in example.com"):
            read(up, FakeHttp(docs), id_token(up, hd=other))


def test_entra_one_tenant_audience_by_scope_and_oid_from_the_id_token_alone() -> None:
    up = providers.entra(tenant=TENANT.upper(), client_id="app-id", client_secret=SECRET,
                         scopes=["api://mcp-files/.default"])
    base = f"https://login.microsoftonline.com/{TENANT}"
    assert up.issuer == f"{base}/v2.0"
    assert (up.authorize_url, up.token_url) == (f"{base}/oauth2/v2.0/authorize",
                                                f"{base}/oauth2/v2.0/token")
    assert up.scopes == ("openid", "profile", "email", "offline_access", "api://mcp-files/.default")
    assert up.userinfo_url is None and up.subject_claim == "oid"
    http = FakeHttp(provider_docs(up, [jwk(RSA_KEY, "k1")]))
    who = read(up, http, id_token(up, oid="0000-oid", tid=TENANT, name="Ann"))
    assert who.subject == "0000-oid" and who.claims["name"] == "Ann"
    assert [url for url, _ in http.gets] == [f"{base}/v2.0/.well-known/openid-configuration",
                                             f"{base}/v2.0/jwks"]  # no userinfo


@pytest.mark.parametrize(("options", "message"), [
    ({"tenant": "common"}, "multi-tenant aliases"),
    ({"tenant": "Organizations"}, "multi-tenant aliases"),
    ({"tenant": "contoso.onmicrosoft.com"}, "a GUID such as"),
    ({"tenant": TENANT, "scopes": ["api://a/.default", "https://graph.microsoft.com/User.Read"]},
     "one resource per request"),
    ({"tenant": TENANT, "authority": "https://login.microsoftonline.com"}, "authority is a host"),
    ({"tenant": TENANT, "client_secret": ""}, "client_secret is required"),
])
def test_entra_misconfiguration_fails_at_start_up(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        providers.entra(**{"client_id": "app", "client_secret": SECRET, **options})


def test_auth0_domain_trailing_slash_issuer_and_audience() -> None:
    up = providers.auth0(domain="Tenant.EU.auth0.com", client_id="c", client_secret=SECRET,
                         audience="https://api.example.com/mcp")
    assert up.issuer == "https://tenant.eu.auth0.com/"
    assert (up.authorize_url, up.token_url, up.userinfo_url, up.revocation_url) == (
        "https://tenant.eu.auth0.com/authorize", "https://tenant.eu.auth0.com/oauth/token",
        "https://tenant.eu.auth0.com/userinfo", "https://tenant.eu.auth0.com/oauth/revoke")
    assert dict(up.extra_authorize_params) == {"audience": "https://api.example.com/mcp"}
    http = FakeHttp(provider_docs(up, [jwk(EC_KEY, "ec1")], {
        "sub": "auth0|abc", "nickname": "ann"}))
    who = read(up, http, id_token(up, key=EC_KEY, kid="ec1", alg="ES256", sub="auth0|abc"))
    assert who.subject == "auth0|abc" and who.claims["nickname"] == "ann"
    assert http.gets[0][0] == "https://tenant.eu.auth0.com/.well-known/openid-configuration"


@pytest.mark.parametrize(("domain", "audience"), [("https://tenant.auth0.com", None),
                                                  ("tenant.auth0.com/x", None),
                                                  ("localhost", None),
                                                  ("tenant.auth0.com", " api ")])
def test_auth0_misconfiguration_fails_at_start_up(domain: str, audience: str | None) -> None:
    with pytest.raises(ValueError, match="domain is a host name|audience is your Auth0 API"):
        providers.auth0(domain=domain, audience=audience, client_id="c", client_secret=SECRET)


def test_keycloak_realm_endpoints_including_the_old_auth_prefix() -> None:
    up = providers.keycloak("https://sso.example.com/auth/", realm="tools", client_id="mcp",
                            client_secret=SECRET)
    realm = "https://sso.example.com/auth/realms/tools"
    assert up.issuer == realm
    assert (up.authorize_url, up.token_url, up.userinfo_url, up.revocation_url) == (
        f"{realm}/protocol/openid-connect/auth", f"{realm}/protocol/openid-connect/token",
        f"{realm}/protocol/openid-connect/userinfo", f"{realm}/protocol/openid-connect/revoke")
    http = FakeHttp(provider_docs(up, [jwk(RSA_KEY, "k1")], {
        "sub": "user-1", "preferred_username": "ann"}))
    assert read(up, http, id_token(up)).claims["preferred_username"] == "ann"
    for realm_name in ("", "a/b", "../x", "a b"):
        with pytest.raises(ValueError, match="realm is the realm's name"):
            providers.keycloak("https://sso.example.com", realm=realm_name, client_id="mcp",
                               client_secret=SECRET)
    with pytest.raises(ValueError, match="must use https outside loopback"):
        providers.keycloak("http://sso.example.com", realm="tools", client_id="m",
                           client_secret=SECRET)


def test_generic_oidc_discovers_its_endpoints_and_verifies_the_id_token() -> None:
    up = providers.oidc("https://idp.example.com", client_id="c", client_secret=SECRET,
                        scopes=["groups"])
    assert up.authorize_url is None and up.scopes == ("openid", "email", "profile", "groups")
    found = up.with_endpoints({  # what the facade does with the discovery document at start-up
        "issuer": "https://idp.example.com", "authorization_endpoint": "https://idp.example.com/a",
        "token_endpoint": "https://idp.example.com/t", "userinfo_endpoint": "https://idp.example.com/u"})
    assert (found.authorize_url, found.token_url, found.userinfo_url) == (
        "https://idp.example.com/a", "https://idp.example.com/t", "https://idp.example.com/u")
    http = FakeHttp(provider_docs(found, [jwk(RSA_KEY, "k1")], {"sub": "user-1", "groups": ["x"]}))
    assert read(found, http, id_token(found)).claims["groups"] == ["x"]


@pytest.mark.parametrize("make", [
    lambda **kw: providers.oidc("https://idp.example.com", **kw),
    lambda **kw: providers.github(**kw),
    lambda **kw: providers.google(**kw),
    lambda **kw: providers.entra(tenant=TENANT, **kw),
    lambda **kw: providers.auth0(domain="t.auth0.com", **kw),
    lambda **kw: providers.keycloak("https://sso.example.com", realm="r", **kw),
], ids=["oidc", "github", "google", "entra", "auth0", "keycloak"])
def test_every_preset_needs_its_client_secret_and_client_id(make: Any) -> None:
    with pytest.raises(ValueError, match="client_secret is required"):
        make(client_id="c", client_secret=None)
    with pytest.raises(ValueError, match="client_id is required"):
        make(client_id="", client_secret=SECRET)
    with pytest.raises(ValueError, match="scopes is a list of strings"):
        make(client_id="c", client_secret=SECRET, scopes="openid email")
    assert SECRET not in repr(make(client_id="c", client_secret=SECRET))


# -- ID token verification -----------------------------------------------------------------------------


KEYCLOAK = providers.keycloak("https://sso.example.com", realm="tools", client_id="mcp",
                              client_secret=SECRET)


def _refused(token: str | None, message: str, keys: list[dict[str, Any]] | None = None,
             userinfo: dict[str, Any] | None = None, up: Upstream = KEYCLOAK) -> None:
    docs = provider_docs(up, keys if keys is not None else [jwk(RSA_KEY, "k1")],
                         userinfo if userinfo is not None else {"sub": "user-1"})
    with pytest.raises(UpstreamError, match=message):
        read(up, FakeHttp(docs), token)


@pytest.mark.parametrize(("claims", "message"), [
    ({"iss": "https://sso.example.com/realms/other"}, r"refused \(InvalidIssuerError\)"),
    ({"aud": "someone-else"}, r"refused \(InvalidAudienceError\)"),
    ({"exp": int(time.time()) - 3600}, r"refused \(ExpiredSignatureError\)"),
    ({"iat": int(time.time()) + 3600}, r"refused \(ImmatureSignatureError\)"),
    ({"iat": None}, r"refused \(MissingRequiredClaimError\)"),
    ({"sub": None}, r"refused \(MissingRequiredClaimError\)"),
    ({"aud": ["mcp", "other"]}, "several audiences and not authorized for us"),
])
def test_an_id_token_with_wrong_claims_is_refused(claims: dict[str, Any], message: str) -> None:
    _refused(id_token(KEYCLOAK, **claims), message)


@pytest.mark.parametrize(("nonce", "sent", "message"), [
    (None, NONCE, "nonce is missing or not this sign-in's"),            # no nonce claim
    ("another-sign-ins-nonce", NONCE, "nonce is missing or not this sign-in's"),
    (NONCE + "x", NONCE, "nonce is missing or not this sign-in's"),     # a prefix is not equal
    (NONCE, None, "sign-in sent no nonce"),                             # nothing to compare with
    (["the-nonce"], NONCE, "nonce is missing or not this sign-in's"),   # not a string
])
def test_an_id_token_without_this_sign_ins_nonce_is_refused(nonce: Any, sent: str | None,
                                                           message: str) -> None:
    docs = provider_docs(KEYCLOAK, [jwk(RSA_KEY, "k1")], {"sub": "user-1"})
    with pytest.raises(UpstreamError, match=message):
        read(KEYCLOAK, FakeHttp(docs), id_token(KEYCLOAK, nonce=nonce), nonce=sent)


def test_an_id_token_with_this_sign_ins_nonce_is_accepted() -> None:
    docs = provider_docs(KEYCLOAK, [jwk(RSA_KEY, "k1")], {"sub": "user-1"})
    who = read(KEYCLOAK, FakeHttp(docs), id_token(KEYCLOAK, nonce="n-42"), nonce="n-42")
    assert who.subject == "user-1" and who.claims["nonce"] == "n-42"


def test_an_id_token_for_several_audiences_is_accepted_when_azp_is_us() -> None:
    docs = provider_docs(KEYCLOAK, [jwk(RSA_KEY, "k1")], {"sub": "user-1"})
    who = read(KEYCLOAK, FakeHttp(docs), id_token(KEYCLOAK, aud=["mcp", "other"], azp="mcp"))
    assert who.subject == "user-1"


def test_id_token_signatures_algorithms_and_key_sources() -> None:
    _refused(id_token(KEYCLOAK, key=OTHER_KEY), r"refused \(InvalidSignatureError\)")
    _refused(jwt.encode({"sub": "x"}, SECRET, algorithm="HS256", headers={"kid": "k1"}),
             "algorithm 'HS256' is not accepted")
    _refused(id_token(KEYCLOAK, key=EC_KEY, alg="ES256"),  # an EC signature under the RSA kid
             "algorithm does not match its key")
    _refused(id_token(KEYCLOAK, headers={"jku": "https://evil.example/jwks"}),
             "names its own key source")
    _refused(id_token(KEYCLOAK, kid="unknown"), "names a key the provider does not publish")
    _refused("not.a.jwt", "not a JWT")
    _refused(None, "sent no id_token")
    _refused(id_token(KEYCLOAK), "userinfo names another subject",
             userinfo={"sub": "someone-else"})


def test_a_discovery_document_naming_another_issuer_is_refused() -> None:
    up = providers.keycloak("https://sso.example.com", realm="tools", client_id="mcp",
                            client_secret=SECRET)  # a fresh reader: nothing cached
    docs = provider_docs(up, [jwk(RSA_KEY, "k1")], {"sub": "user-1"})
    docs[f"{up.issuer}/.well-known/openid-configuration"]["issuer"] = "https://evil.example"
    with pytest.raises(UpstreamError, match="names another issuer"):
        read(up, FakeHttp(docs), id_token(up))


def test_keys_are_cached_and_a_rotated_kid_refetches_at_most_every_ten_seconds() -> None:
    now = [1000.0]
    reader = providers.oidc_identity(clock=lambda: now[0])
    up = Upstream(**{**{f: getattr(KEYCLOAK, f) for f in (
        "client_id", "client_secret", "issuer", "authorize_url", "token_url", "userinfo_url")},
        "identity": reader})
    docs = provider_docs(up, [jwk(RSA_KEY, "k1")], {"sub": "user-1"})
    http = FakeHttp(docs)
    jwks_uri = up.issuer + "/jwks" if up.issuer else ""

    def run(token: str) -> Identity:
        return asyncio.run(reader(http, UpstreamTokens(access_token="a", id_token=token,
                                                       nonce=NONCE), up))

    run(id_token(up))
    run(id_token(up))
    assert [u for u, _ in http.gets].count(jwks_uri) == 1  # cached
    docs[jwks_uri] = {"keys": [jwk(RSA_KEY, "k1"), jwk(OTHER_KEY, "k2")]}  # rotation
    with pytest.raises(UpstreamError, match="does not publish"):
        run(id_token(up, key=OTHER_KEY, kid="k2"))  # within 10 s of the last fetch: no refetch
    assert [u for u, _ in http.gets].count(jwks_uri) == 1
    now[0] += 11
    assert run(id_token(up, key=OTHER_KEY, kid="k2")).subject == "user-1"
    assert [u for u, _ in http.gets].count(jwks_uri) == 2
