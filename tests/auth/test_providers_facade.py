"""Presets through the whole facade, against small fakes of GitHub, Google, Entra ID and Auth0
that reproduce each provider's quirks (gateway-identity-extensions.md §2.3): the facade's
/authorize sends what the provider needs, /callback redeems the code the way it accepts, and the
preset's reader turns its answers into the identity a tool sees. A fake refuses whatever its
provider would refuse, so a preset that got a quirk wrong fails its sign-in here."""

from __future__ import annotations

import base64
import os
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

import rondo
from rondo.auth.facade import Facade, MemoryStore, Upstream, providers
from tests.helpers.facade_world import ISSUER, RESOURCE, SECRET, World, run

KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
JWK = {**RSAAlgorithm.to_jwk(KEY.public_key(), as_dict=True), "kid": "fake-1", "use": "sig"}
CLIENT_SECRET = "the-facades-secret-at-the-provider"
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"


def json_or_form(request: httpx.Request) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(request.content.decode()).items()}


class Fake:
    """A provider: `authorize(params)` is the user signing in (returns the code or raises),
    `handle(request)` its HTTP endpoints. `refusals` says what it refused, and why."""

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        self.codes: dict[str, dict[str, str]] = {}
        self.refusals: list[str] = []
        self.user: dict[str, Any] = {}

    def authorize(self, params: dict[str, str]) -> str:
        code = "code-" + os.urandom(6).hex()
        self.codes[code] = params
        return code

    def refuse(self, why: str, status: int = 400, error: str = "invalid_request") -> httpx.Response:
        self.refusals.append(why)
        return httpx.Response(status, json={"error": error, "error_description": why})

    def id_token(self, issuer: str, **claims: Any) -> str:
        now = int(time.time())
        return jwt.encode({"iss": issuer, "aud": self.upstream.client_id, "iat": now,
                           "exp": now + 600, **claims}, KEY, algorithm="RS256",
                          headers={"kid": "fake-1"})

    def handle(self, request: httpx.Request) -> httpx.Response:
        raise NotImplementedError


class FakeGitHub(Fake):
    """OAuth 2.0 only: form-encoded token answers unless JSON is asked for, errors with HTTP
    200, the secret in the form, opaque tokens that never expire, `GET /user` for the user."""

    tokens: dict[str, int]

    def handle(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        if url == "https://github.com/login/oauth/access_token":
            form = json_or_form(request)
            if form.get("client_secret") != CLIENT_SECRET:
                self.refusals.append("secret not in the form")
                return httpx.Response(200, json={"error": "incorrect_client_credentials"})
            params = self.codes.pop(form.pop("code", ""), None)
            if params is None:
                return httpx.Response(200, json={"error": "bad_verification_code"})
            token = "gho_" + os.urandom(8).hex()
            self.tokens = {token: 4242}
            granted = ",".join(params.get("scope", "").split())  # GitHub separates with commas
            self.codes_scope = granted.split(",")
            answer = {"access_token": token, "token_type": "bearer", "scope": granted}
            if "application/json" not in request.headers.get("accept", ""):
                self.refusals.append("no accept: application/json")
                return httpx.Response(200, text="&".join(f"{k}={v}" for k, v in answer.items()),
                                      headers={"content-type": "application/x-www-form-urlencoded"})
            return httpx.Response(200, json=answer)
        if url == "https://api.github.com/user":
            token = request.headers.get("authorization", "").removeprefix("Bearer ")
            if token not in getattr(self, "tokens", {}):
                return httpx.Response(401, json={"message": "Bad credentials"})
            if request.headers.get("accept") != "application/vnd.github+json":
                return self.refuse("no accept: application/vnd.github+json", 415)
            return httpx.Response(200, json={"id": 4242, "login": "octo", "name": "Octo Cat",
                                             "email": None, "type": "User", "site_admin": False})
        if url == "https://api.github.com/user/emails":  # a JSON array; needs user:email
            token = request.headers.get("authorization", "").removeprefix("Bearer ")
            if token not in getattr(self, "tokens", {}):
                return httpx.Response(401, json={"message": "Bad credentials"})
            if "user:email" not in self.codes_scope:
                return self.refuse("emails read without user:email", 404)
            return httpx.Response(200, json=[
                {"email": "octo@users.noreply.github.com", "primary": False, "verified": True,
                 "visibility": None},
                {"email": "octo@example.com", "primary": True, "verified": True,
                 "visibility": "private"}])
        return httpx.Response(404)


class FakeOpenId(Fake):
    """An OpenID provider at `issuer` with discovery, JWKS, a token endpoint that checks the
    client, and userinfo; the `quirks` hook adds a provider's own refusals."""

    issuer = ""
    jwks_uri = ""
    userinfo_url: str | None = None
    secret_in = "basic"

    def discovery(self) -> dict[str, Any]:
        return {"issuer": self.issuer, "jwks_uri": self.jwks_uri}

    def quirks(self, params: dict[str, str], form: dict[str, str]) -> httpx.Response | None:
        return None

    def answer(self, params: dict[str, str]) -> dict[str, Any]:
        nonce = {"nonce": params["nonce"]} if "nonce" in params else {}  # echoed, as OpenID says
        return {"access_token": "at-" + os.urandom(6).hex(), "token_type": "Bearer",
                "expires_in": 3600, "id_token": self.id_token(self.issuer, **nonce, **self.user)}

    def handle(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        if url == self.issuer.rstrip("/") + "/.well-known/openid-configuration":
            return httpx.Response(200, json=self.discovery())
        if url == self.jwks_uri:
            return httpx.Response(200, json={"keys": [JWK]})
        if url == self.upstream.token_url:
            form = json_or_form(request)
            if self.secret_in == "post":
                ok = form.get("client_secret") == CLIENT_SECRET
            else:
                pair = f"{self.upstream.client_id}:{CLIENT_SECRET}".encode()
                ok = request.headers.get("authorization") == "Basic " + base64.b64encode(pair).decode()
            if not ok:
                return self.refuse(f"client secret not sent by {self.secret_in}", 401, "invalid_client")
            params = self.codes.pop(form.get("code", ""), None)
            if params is None:
                return self.refuse("unknown code", 400, "invalid_grant")
            refused = self.quirks(params, form)
            if refused is not None:
                return refused
            self.last_answer = self.answer(params)
            self.access = self.last_answer["access_token"]
            return httpx.Response(200, json=self.last_answer)
        if self.userinfo_url is not None and url == self.userinfo_url:
            if request.headers.get("authorization") != f"Bearer {getattr(self, 'access', '')}":
                return httpx.Response(401)
            return httpx.Response(200, json={"sub": self.user["sub"], "email": "ann@example.com",
                                             "name": "Ann"})
        return httpx.Response(404)


class FakeGoogle(FakeOpenId):
    """A refresh token only with access_type=offline (and prompt=consent to get it again)."""

    issuer = "https://accounts.google.com"
    jwks_uri = "https://www.googleapis.com/oauth2/v3/certs"
    userinfo_url = "https://openidconnect.googleapis.com/v1/userinfo"

    def answer(self, params: dict[str, str]) -> dict[str, Any]:
        out = super().answer(params)
        if params.get("access_type") == "offline" and params.get("prompt") == "consent":
            out["refresh_token"] = "1//rt-" + os.urandom(4).hex()
        return out


class FakeEntra(FakeOpenId):
    """v2: no `resource` parameter (AADSTS901002), scopes required at the token endpoint
    (AADSTS28003), one resource per request (AADSTS28000), no userinfo for non-Graph tokens."""

    issuer = f"https://login.microsoftonline.com/{TENANT}/v2.0"
    jwks_uri = f"https://login.microsoftonline.com/{TENANT}/discovery/v2.0/keys"
    secret_in = "post"

    def quirks(self, params: dict[str, str], form: dict[str, str]) -> httpx.Response | None:
        if "resource" in params or "resource" in form:
            return self.refuse("AADSTS901002: the 'resource' request parameter is not supported")
        if not form.get("scope"):
            return self.refuse("AADSTS28003: provided value for the input parameter scope "
                               "cannot be empty", error="invalid_scope")
        resources = {s.rsplit("/", 1)[0] for s in form["scope"].split() if "/" in s}
        if len(resources) > 1:
            return self.refuse("AADSTS28000: more than one resource", error="invalid_scope")
        return None


class FakeAuth0(FakeOpenId):
    """Issuer with a trailing slash; a JWT access token only when `audience` was asked for."""

    issuer = "https://tenant.eu.auth0.com/"
    jwks_uri = "https://tenant.eu.auth0.com/.well-known/jwks.json"
    userinfo_url = "https://tenant.eu.auth0.com/userinfo"
    secret_in = "post"

    def answer(self, params: dict[str, str]) -> dict[str, Any]:
        out = super().answer(params)
        if "audience" in params:
            now = int(time.time())
            out["access_token"] = jwt.encode({"iss": self.issuer, "aud": [params["audience"],
                                              self.userinfo_url], "sub": self.user["sub"],
                                              "iat": now, "exp": now + 600}, KEY, algorithm="RS256",
                                             headers={"kid": "fake-1"})
        return out


class PresetWorld(World):
    """tests.helpers.facade_world's World, with a preset and a fake of its provider upstream."""

    def __init__(self, upstream: Upstream, fake: Fake) -> None:  # noqa: D107
        self.fake = fake
        self.clock = time.time  # type: ignore[assignment]
        self.facade = Facade(issuer=ISSUER, resource=RESOURCE, upstream=upstream, secret=SECRET,
                             scopes_supported=["mcp"], store=MemoryStore(),
                             upstream_transport=httpx.MockTransport(fake.handle))
        self.server = rondo.Server("preset", auth=self.facade.resource_server(),
                                   state=rondo.StatePolicy(secret=b"a shared secret of 32 bytes or more!"))
        facade = self.facade

        @self.server.tool
        async def whoami(ctx: rondo.Context) -> dict[str, Any]:
            """What the preset read, and whether the provider gave a refresh token."""
            tokens = await facade.upstream_tokens(ctx.auth)
            return {"subject": ctx.auth.subject, "upstream": dict(ctx.auth.claims["upstream"]),
                    "refresh": tokens.refresh_token is not None}

        self.app = self.server.asgi(allowed_hosts=None)
        self.http = httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app, client=("10.0.0.7", 5000)),
                                      base_url=ISSUER)

    async def provider_signs_in(self, upstream_redirect: httpx.Response,
                                browser: httpx.AsyncClient | None = None) -> httpx.Response:
        assert upstream_redirect.status_code == 302, upstream_redirect.text
        location = upstream_redirect.headers["location"]
        self.authorize_url = location
        params = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
        code = self.fake.authorize(params)
        return await (browser or self.http).get("/callback", params={"code": code, "state": params["state"]})

    async def who(self) -> dict[str, Any]:
        tokens = await self.sign_in()
        answer = await self.call("whoami", tokens["access_token"])
        return dict(answer.json()["result"]["structuredContent"])

    async def refused(self) -> dict[str, list[str]]:
        client = await self.register()
        page = await self.http.get("/authorize", params=self.authorize_params(client, "v" * 43))
        back = await self.provider_signs_in(await self.consent(page))
        return parse_qs(urlsplit(back.headers["location"]).query)


def test_github_through_the_facade() -> None:
    up = providers.github(client_id="Iv1.abc", client_secret=CLIENT_SECRET)
    world = PresetWorld(up, FakeGitHub(up))
    seen = run(world.who())
    assert world.fake.refusals == []
    assert world.authorize_url.startswith("https://github.com/login/oauth/authorize?")
    assert seen == {"subject": "4242", "refresh": False, "upstream": {
        "id": 4242, "login": "octo", "name": "Octo Cat", "email": None, "type": "User"}}


def test_google_through_the_facade_with_a_refresh_token_and_the_hosted_domain() -> None:
    up = providers.google(client_id="1.apps.googleusercontent.com", client_secret=CLIENT_SECRET,
                          hosted_domain="example.com")
    fake = FakeGoogle(up)
    fake.user = {"sub": "1077", "hd": "example.com", "email": "ann@example.com"}
    world = PresetWorld(up, fake)
    seen = run(world.who())
    assert fake.refusals == [] and seen["refresh"] is True  # offline + consent were sent
    assert seen["subject"] == "1077" and seen["upstream"]["hd"] == "example.com"
    assert seen["upstream"]["name"] == "Ann"  # from userinfo, after the verified ID token
    # An account outside the domain (the `hd` parameter is only a hint to Google's page).
    fake.user = {"sub": "666", "hd": "gmail.com"}
    refused = run(PresetWorld(up, fake).refused())
    assert refused["error"] == ["temporarily_unavailable"]


def test_google_without_offline_gets_no_refresh_token() -> None:
    up = providers.google(client_id="1.apps.googleusercontent.com", client_secret=CLIENT_SECRET,
                          offline=False)
    fake = FakeGoogle(up)
    fake.user = {"sub": "1077"}
    assert run(PresetWorld(up, fake).who())["refresh"] is False


def test_entra_through_the_facade_scopes_at_the_token_endpoint_and_no_resource() -> None:
    up = providers.entra(tenant=TENANT, client_id="app-id", client_secret=CLIENT_SECRET,
                         scopes=["api://mcp-files/.default"])
    fake = FakeEntra(up)
    fake.user = {"sub": "pairwise-sub", "oid": "00000000-0000-0000-0000-0000000000aa",
                 "tid": TENANT, "name": "Ann"}
    world = PresetWorld(up, fake)
    seen = run(world.who())
    assert fake.refusals == []
    assert seen["subject"] == "00000000-0000-0000-0000-0000000000aa"
    assert seen["upstream"]["tid"] == TENANT and seen["refresh"] is False
    # The same fake refuses a declaration without the token-endpoint scopes (AADSTS28003).
    bare = Upstream(**{**{f: getattr(up, f) for f in (
        "client_id", "client_secret", "issuer", "authorize_url", "token_url", "scopes",
        "subject_claim", "identity", "token_auth")}})
    refused = run(PresetWorld(bare, FakeEntra(bare)).refused())
    assert refused["error"] == ["temporarily_unavailable"]


def test_auth0_through_the_facade_asks_for_the_audience() -> None:
    up = providers.auth0(domain="tenant.eu.auth0.com", client_id="abc",
                         client_secret=CLIENT_SECRET, audience="https://api.example.com/mcp")
    fake = FakeAuth0(up)
    fake.user = {"sub": "auth0|ann"}
    world = PresetWorld(up, fake)
    seen = run(world.who())
    assert fake.refusals == [] and seen["subject"] == "auth0|ann"
    assert parse_qs(urlsplit(world.authorize_url).query)["audience"] == ["https://api.example.com/mcp"]
    assert fake.last_answer["access_token"].count(".") == 2  # a JWT for the API, not opaque
    assert seen["upstream"]["email"] == "ann@example.com"


@pytest.mark.parametrize("make", [
    lambda: providers.github(client_id="Iv1.abc", client_secret="wrong"),
    lambda: providers.auth0(domain="tenant.eu.auth0.com", client_id="abc", client_secret="wrong"),
], ids=["github", "auth0"])
def test_a_provider_refusing_the_client_ends_the_sign_in_without_leaking(make: Any,
                                                                          caplog: pytest.LogCaptureFixture) -> None:
    up = make()
    fake: Fake = FakeGitHub(up) if up.name == "github" else FakeAuth0(up)
    fake.user = {"sub": "x"}
    refused = run(PresetWorld(up, fake).refused())
    assert refused["error"] == ["temporarily_unavailable"]
    assert "wrong" not in caplog.text and CLIENT_SECRET not in caplog.text


class FakeGoogleReplaying(FakeGoogle):
    """Answers with an ID token minted for an earlier sign-in (its nonce, or none at all)."""

    stale: str | None = "an-earlier-sign-ins-nonce"

    def answer(self, params: dict[str, str]) -> dict[str, Any]:
        out = super().answer(params)
        claims = {**self.user, **({"nonce": self.stale} if self.stale is not None else {})}
        out["id_token"] = self.id_token(self.issuer, **claims)
        return out


def test_the_facade_sends_a_fresh_nonce_and_refuses_an_id_token_from_another_sign_in(
        caplog: pytest.LogCaptureFixture) -> None:
    up = providers.google(client_id="1.apps.googleusercontent.com", client_secret=CLIENT_SECRET)
    fake = FakeGoogle(up)
    fake.user = {"sub": "1077"}
    world = PresetWorld(up, fake)
    run(world.who())
    first = parse_qs(urlsplit(world.authorize_url).query)["nonce"][0]
    run(world.who())
    second = parse_qs(urlsplit(world.authorize_url).query)["nonce"][0]
    assert len(first) >= 32 and first != second  # one per sign-in, not per facade
    for stale in ("an-earlier-sign-ins-nonce", None):
        replaying = FakeGoogleReplaying(up)
        replaying.user, replaying.stale = {"sub": "1077"}, stale
        refused = run(PresetWorld(up, replaying).refused())
        assert refused["error"] == ["temporarily_unavailable"]
    assert caplog.text.count("nonce is missing or not this sign-in's") == 2


def test_github_asks_for_no_openid_nonce() -> None:
    up = providers.github(client_id="Iv1.abc", client_secret=CLIENT_SECRET)
    world = PresetWorld(up, FakeGitHub(up))
    run(world.who())
    assert "nonce" not in parse_qs(urlsplit(world.authorize_url).query)


def test_github_with_user_email_reads_the_primary_verified_address_through_the_facade() -> None:
    up = providers.github(client_id="Iv1.abc", client_secret=CLIENT_SECRET, scopes=["user:email"])
    world = PresetWorld(up, FakeGitHub(up))
    seen = run(world.who())
    assert world.fake.refusals == []
    assert parse_qs(urlsplit(world.authorize_url).query)["scope"] == ["read:user user:email"]
    assert seen["upstream"]["email"] == "octo@example.com"
    assert seen["upstream"]["email_verified"] is True
