"""Provider presets: the identity providers teams already run, as `Upstream` declarations.

    from rondo.auth.facade import providers
    upstream = providers.github(client_id="Iv1...", client_secret=vault["github"])
    upstream = providers.keycloak("https://sso.example.com", realm="tools",
                                  client_id="mcp-facade", client_secret=vault["keycloak"])

Each preset is a function that checks its settings (a `ValueError` at start-up, never at sign-in)
and returns an `Upstream`: the endpoints, the scopes, how the secret is sent, and how the
signed-in user is read. OpenID providers (`oidc`, `google`, `entra`, `auth0`, `keycloak`) read
the user from the ID token, verified here (`oidc_identity`: signature against the provider's
JWKS, `iss`, `aud`, `azp`, `exp`, `iat`, `nonce`), merged with `userinfo` where the provider's access
token may read it. GitHub is OAuth 2.0 only: its tokens are opaque, and the user comes from its
REST API.

Declarations only: importing this module imports nothing beyond the stdlib; PyJWT (the `auth`
extra) is imported when an ID token is first checked.
"""

from __future__ import annotations

import hmac
import re
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from ..urls import check_url
from .upstream import (
    Identity,
    IdentityReader,
    TokenAuth,
    Upstream,
    UpstreamError,
    UpstreamHttp,
    UpstreamTokens,
)

# Asymmetric only: an ID token signed with the client secret (HS256) is refused, as are `none`.
ID_TOKEN_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
                       "ES256", "ES384", "ES512", "EdDSA")
_FORBIDDEN_HEADERS = ("jku", "x5u", "jwk", "crit")
_FAMILY = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}  # an algorithm's key type
_MAX_KEYS = 64
_HOST = re.compile(r"^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")
_REALM = re.compile(r"^[A-Za-z0-9._~-]{1,255}$")
_ENTRA_MULTI = ("common", "organizations", "consumers")
_MAX_EMAILS = 100  # GitHub's /user/emails entries looked at


# -- the ID token reader ------------------------------------------------------------------------


class _Keys:
    """One provider's signing keys, from its discovery document's `jwks_uri`: cached for `ttl`,
    fetched again for an unknown `kid` at most once per `min_refresh` (rotation, not a flood)."""

    def __init__(self, ttl: float, min_refresh: float, clock: Callable[[], float]) -> None:
        self.ttl = ttl
        self.min_refresh = min_refresh
        self.clock = clock
        self.keys: dict[str, Any] = {}  # kid ("" when the JWKS gives none) -> PyJWK
        self.fetched_at: float | None = None

    async def key(self, http: UpstreamHttp, upstream: Upstream, kid: str) -> Any:
        now = self.clock()
        stale = self.fetched_at is None or now - self.fetched_at >= self.ttl
        unknown = kid not in self.keys and (self.fetched_at is None
                                            or now - self.fetched_at >= self.min_refresh)
        if stale or unknown:
            await self._fetch(http, upstream)
        found = self.keys.get(kid)
        if found is None and kid == "" and len(self.keys) == 1:
            found = next(iter(self.keys.values()))
        if found is None:
            raise UpstreamError("the ID token names a key the provider does not publish")
        return found

    async def _fetch(self, http: UpstreamHttp, upstream: Upstream) -> None:
        import jwt

        issuer = upstream.issuer
        assert issuer is not None
        doc = await http.get_json(issuer.rstrip("/") + "/.well-known/openid-configuration")
        if doc.get("issuer") != issuer:
            raise UpstreamError("the provider's discovery document names another issuer")
        try:
            jwks_uri = check_url(doc.get("jwks_uri"), "jwks_uri")
        except ValueError:
            raise UpstreamError("the provider's discovery document has no usable jwks_uri") from None
        jwks = await http.get_json(jwks_uri)
        entries = jwks.get("keys")
        if not isinstance(entries, list):
            raise UpstreamError("the provider's JWKS has no keys")
        keys: dict[str, Any] = {}
        for entry in entries[:_MAX_KEYS]:
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            try:
                parsed = jwt.PyJWK(entry)
            except (jwt.PyJWTError, ValueError, TypeError, KeyError):
                continue  # a key type this PyJWT cannot read: skipped, not fatal
            kid = entry.get("kid")
            keys[kid if isinstance(kid, str) else ""] = parsed
        self.keys = keys
        self.fetched_at = self.clock()


def oidc_identity(*, userinfo: bool = True, leeway: float = 60.0, jwks_ttl: float = 3600.0,
                  clock: Callable[[], float] = time.time,
                  check: Callable[[Mapping[str, Any]], str | None] | None = None) -> IdentityReader:
    """An `IdentityReader` for an OpenID provider: the ID token from the token response,
    verified (signature with the provider's published keys, asymmetric algorithms only; `iss`
    exactly the upstream's issuer; `aud` naming the client id, `azp` the client id when `aud`
    names others too; `exp` and `iat` with `leeway` seconds of skew; the key's type suits
    the algorithm; no `jku`/`x5u`/`jwk`/`crit`; `nonce` exactly the one the facade sent with
    this sign-in, `UpstreamTokens.nonce`, so a replayed or injected ID token is refused). With `userinfo`, the
    userinfo document's claims are added (its `sub` must be the ID token's). The subject is the
    upstream's `subject_claim`. `check(claims)` returns a reason to refuse the user, or None."""
    keys = _Keys(ttl=jwks_ttl, min_refresh=10.0, clock=clock)

    async def read(http: UpstreamHttp, tokens: UpstreamTokens, upstream: Upstream) -> Identity:
        if upstream.issuer is None:
            raise UpstreamError("an OpenID identity needs the provider's issuer")
        if not tokens.id_token:
            raise UpstreamError("the provider sent no id_token (is `openid` among the scopes?)")
        claims = await _verified(http, tokens.id_token, upstream, keys, leeway)
        if tokens.nonce is None:
            raise UpstreamError("the sign-in sent no nonce to check the ID token against")
        nonce = claims.get("nonce")
        if not isinstance(nonce, str) or not hmac.compare_digest(nonce.encode(), tokens.nonce.encode()):
            raise UpstreamError("the ID token's nonce is missing or not this sign-in's")
        if userinfo and upstream.userinfo_url is not None:
            headers = {**upstream.userinfo_headers, "authorization": f"Bearer {tokens.access_token}"}
            doc = await http.get_json(upstream.userinfo_url, headers=headers)
            if doc.get("sub") != claims["sub"]:
                raise UpstreamError("userinfo names another subject than the ID token")
            claims = {**doc, **claims}
        if check is not None:
            reason = check(claims)
            if reason is not None:
                raise UpstreamError(reason)
        subject = claims.get(upstream.subject_claim)
        if isinstance(subject, bool) or not isinstance(subject, str | int) or subject == "":
            raise UpstreamError(f"the ID token has no usable {upstream.subject_claim!r}")
        return Identity(subject=str(subject), claims=claims)

    return read


async def _verified(http: UpstreamHttp, token: str, upstream: Upstream, keys: _Keys,
                    leeway: float) -> dict[str, Any]:
    import jwt

    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise UpstreamError("the ID token is not a JWT") from None
    alg = header.get("alg")
    if alg not in ID_TOKEN_ALGORITHMS:
        raise UpstreamError(f"the ID token's algorithm {alg!r} is not accepted")
    if any(name in header for name in _FORBIDDEN_HEADERS):
        raise UpstreamError("the ID token names its own key source (jku/x5u/jwk/crit)")
    kid = header.get("kid")
    key = await keys.key(http, upstream, kid if isinstance(kid, str) else "")
    if getattr(key, "key_type", None) != _FAMILY[alg[:2]]:
        raise UpstreamError("the ID token's algorithm does not match its key")
    try:
        claims: dict[str, Any] = jwt.decode(
            token, key.key, algorithms=[alg], audience=upstream.client_id, issuer=upstream.issuer,
            leeway=leeway, options={"require": ["iss", "sub", "aud", "exp", "iat"]})
    except jwt.PyJWTError as exc:
        raise UpstreamError(f"the ID token is refused ({type(exc).__name__})") from None
    except (ValueError, TypeError):
        raise UpstreamError("the ID token's algorithm does not match its key") from None
    aud = claims.get("aud")
    if isinstance(aud, list) and len(aud) > 1 and claims.get("azp") != upstream.client_id:
        raise UpstreamError("the ID token is for several audiences and not authorized for us")
    if not isinstance(claims.get("sub"), str) or not claims["sub"]:
        raise UpstreamError("the ID token has no subject")
    return claims


# -- presets --------------------------------------------------------------------------------------


def _secret(name: str, client_id: object, client_secret: object) -> None:
    if not isinstance(client_id, str) or not client_id:
        raise ValueError(f"{name}: client_id is required (the facade's registration there)")
    if not isinstance(client_secret, str) or not client_secret:
        raise ValueError(f"{name}: client_secret is required (the facade is a confidential "
                         "client; read it from your secret store)")


def _scopes(name: str, base: Iterable[str], extra: Iterable[str]) -> tuple[str, ...]:
    if isinstance(extra, str):
        raise ValueError(f"{name}: scopes is a list of strings, not one string")
    out = tuple(dict.fromkeys([*base, *extra]))
    for scope in out:
        if not isinstance(scope, str) or not scope or " " in scope:
            raise ValueError(f"{name}: bad scope {scope!r}")
    return out


def _host(name: str, what: str, value: object) -> str:
    if not isinstance(value, str) or not _HOST.match(value.lower()):
        raise ValueError(f"{name}: {what} is a host name such as tenant.eu.auth0.com (no "
                         f"scheme, no path), got {value!r}")
    return value.lower()


def oidc(issuer: str, *, client_id: str, client_secret: str, scopes: Iterable[str] = (),
         token_auth: TokenAuth = "client_secret_basic", userinfo: bool = True,
         name: str = "oidc", **options: Any) -> Upstream:
    """Any OpenID Connect provider: the endpoints from its discovery document (the facade
    fetches `{issuer}/.well-known/openid-configuration` at the first sign-in and compares `issuer`
    exactly), the user from its verified ID token plus `userinfo`. Scopes: `openid email
    profile` and those given. Other keywords go to `Upstream` (`extra_authorize_params`, ...)."""
    _secret(name, client_id, client_secret)
    check_url(issuer, f"{name}: issuer")
    return Upstream(client_id=client_id, client_secret=client_secret, issuer=issuer,
                    scopes=_scopes(name, ("openid", "email", "profile"), scopes),
                    token_auth=token_auth, identity=oidc_identity(userinfo=userinfo), name=name,
                    **options)


def github(*, client_id: str, client_secret: str, scopes: Iterable[str] = (),
           host: str = "github.com", name: str = "github") -> Upstream:
    """GitHub (an OAuth app or a GitHub App's user sign-in): OAuth 2.0, not OpenID; the access
    token is opaque, so the user is read from the REST API (`GET /user`, subject = its numeric
    `id`, stable across renames; `login`, `name`, `email` (the public one, if any), `type` as
    claims). With the `user:email` scope asked for and granted (the token response's `scope`
    names it), the primary verified address from `GET /user/emails` replaces `email` and
    `email_verified` says whether there was one (the public `email` may be empty or another
    address). Its token endpoint answers JSON only when asked (`accept: application/json`, which
    the facade always sends) and takes the secret in the form. `host` is a GitHub Enterprise
    Server host (its API lives under `/api/v3`)."""
    _secret(name, client_id, client_secret)
    host = _host(name, "host", host)
    base = f"https://{host}"
    api = "https://api.github.com" if host == "github.com" else f"{base}/api/v3"
    accept = {"accept": "application/vnd.github+json", "x-github-api-version": "2022-11-28"}
    wanted = _scopes(name, ("read:user",), scopes)

    async def read(http: UpstreamHttp, tokens: UpstreamTokens, upstream: Upstream) -> Identity:
        headers = {**accept, "authorization": f"Bearer {tokens.access_token}"}
        user = await http.get_json(f"{api}/user", headers=headers)
        uid = user.get("id")
        if isinstance(uid, bool) or not isinstance(uid, int) or uid <= 0:
            raise UpstreamError("GitHub's /user has no numeric id")
        if not isinstance(user.get("login"), str):
            raise UpstreamError("GitHub's /user has no login")
        claims: dict[str, Any] = {key: user[key] for key in ("id", "login", "name", "email", "avatar_url",
                                             "html_url", "type") if key in user}
        granted = set((tokens.scope or "").replace(",", " ").split())
        if "user:email" in granted or "user" in granted:
            emails = await http.get_json_array(f"{api}/user/emails", headers=headers)
            primary = next((entry["email"] for entry in emails[:_MAX_EMAILS]
                            if isinstance(entry, dict) and entry.get("primary") is True
                            and entry.get("verified") is True and isinstance(entry.get("email"), str)
                            and 0 < len(entry["email"]) <= 320), None)
            claims["email_verified"] = primary is not None
            if primary is not None:
                claims["email"] = primary
        return Identity(subject=str(uid), claims=claims)

    return Upstream(client_id=client_id, client_secret=client_secret,
                    authorize_url=f"{base}/login/oauth/authorize",
                    token_url=f"{base}/login/oauth/access_token",
                    userinfo_url=f"{api}/user", scopes=wanted, subject_claim="id",
                    identity=read, token_auth="client_secret_post", pkce=True,
                    userinfo_headers=accept, name=name)


def google(*, client_id: str, client_secret: str, scopes: Iterable[str] = (),
           hosted_domain: str | None = None, offline: bool = True,
           name: str = "google") -> Upstream:
    """Google: OpenID Connect (`https://accounts.google.com`). A refresh token comes only with
    `access_type=offline`, and again after the first consent only with `prompt=consent`, so
    both are sent unless `offline=False`. `hosted_domain` (a Workspace domain) is sent as `hd`
    and enforced on the ID token's `hd` claim (the parameter alone is only a hint)."""
    _secret(name, client_id, client_secret)
    extra: dict[str, str] = {"access_type": "offline", "prompt": "consent"} if offline else {}
    domain: str | None = None
    if hosted_domain is not None:
        domain = _host(name, "hosted_domain", hosted_domain)
        extra["hd"] = domain

    def same_domain(claims: Mapping[str, Any]) -> str | None:
        if domain is not None and claims.get("hd") != domain:
            return f"the Google account is not in {domain}"
        return None

    return Upstream(client_id=client_id, client_secret=client_secret,
                    issuer="https://accounts.google.com",
                    authorize_url="https://accounts.google.com/o/oauth2/v2/auth",
                    token_url="https://oauth2.googleapis.com/token",
                    userinfo_url="https://openidconnect.googleapis.com/v1/userinfo",
                    revocation_url="https://oauth2.googleapis.com/revoke",
                    scopes=_scopes(name, ("openid", "email", "profile"), scopes),
                    identity=oidc_identity(check=same_domain), extra_authorize_params=extra,
                    name=name)


def entra(*, tenant: str, client_id: str, client_secret: str, scopes: Iterable[str] = (),
          authority: str = "login.microsoftonline.com", name: str = "entra") -> Upstream:
    """Microsoft Entra ID (v2 endpoints) for one tenant, given by its id (a GUID): the
    multi-tenant aliases (`common`, `organizations`, `consumers`) have no single issuer to check
    ID tokens against, and a domain name is not the issuer either. The audience of Entra's
    access token is set by scopes (`api://<app>/.default`), not `resource`, and one request may
    name one resource only (AADSTS28000): `scopes` naming two is refused here. The user is read
    from the verified ID token alone (Graph's userinfo needs a Graph token, which a token for
    your API is not); the subject is `oid`, the user's id across the tenant's apps (`sub`
    differs per app). `offline_access` is asked for, for a refresh token, and the scopes are
    sent to the token endpoint too (without them Entra answers AADSTS28003)."""
    _secret(name, client_id, client_secret)
    if not isinstance(tenant, str) or tenant.lower() in _ENTRA_MULTI:
        raise ValueError(f"{name}: tenant must be your tenant's id (a GUID); the multi-tenant "
                         f"aliases {', '.join(_ENTRA_MULTI)} are not supported")
    try:
        tenant = str(uuid.UUID(tenant))
    except ValueError:
        raise ValueError(f"{name}: tenant must be your tenant's id (a GUID such as "
                         f"72f988bf-86f1-41af-91ab-2d7cd011db47), got {tenant!r}") from None
    authority = _host(name, "authority", authority)
    wanted = _scopes(name, ("openid", "profile", "email", "offline_access"), scopes)
    resources = {s.rsplit("/", 1)[0] for s in wanted if "/" in s}
    if len(resources) > 1:
        raise ValueError(f"{name}: Entra ID issues a token for one resource per request "
                         f"(AADSTS28000); these scopes name {len(resources)}: {sorted(resources)}")
    base = f"https://{authority}/{tenant}"
    return Upstream(client_id=client_id, client_secret=client_secret, issuer=f"{base}/v2.0",
                    authorize_url=f"{base}/oauth2/v2.0/authorize",
                    token_url=f"{base}/oauth2/v2.0/token", scopes=wanted, subject_claim="oid",
                    identity=oidc_identity(userinfo=False), token_auth="client_secret_post",
                    extra_token_params={"scope": " ".join(wanted)}, name=name)


def auth0(*, domain: str, client_id: str, client_secret: str, audience: str | None = None,
          scopes: Iterable[str] = (), name: str = "auth0") -> Upstream:
    """Auth0 (`domain`: your tenant's host, `tenant.eu.auth0.com`, or its custom domain). Its
    issuer ends with `/`. Without `audience` (an API identifier you created in Auth0) the
    access token is opaque and good for `userinfo` only; with it, a JWT for that API."""
    _secret(name, client_id, client_secret)
    domain = _host(name, "domain", domain)
    extra: dict[str, str] = {}
    if audience is not None:
        if not isinstance(audience, str) or not audience or audience != audience.strip():
            raise ValueError(f"{name}: audience is your Auth0 API's identifier, got {audience!r}")
        extra["audience"] = audience
    base = f"https://{domain}"
    return Upstream(client_id=client_id, client_secret=client_secret, issuer=f"{base}/",
                    authorize_url=f"{base}/authorize", token_url=f"{base}/oauth/token",
                    userinfo_url=f"{base}/userinfo", revocation_url=f"{base}/oauth/revoke",
                    scopes=_scopes(name, ("openid", "email", "profile", "offline_access"), scopes),
                    identity=oidc_identity(), token_auth="client_secret_post",
                    extra_authorize_params=extra, name=name)


def keycloak(base_url: str, *, realm: str, client_id: str, client_secret: str,
             scopes: Iterable[str] = (), name: str = "keycloak") -> Upstream:
    """Keycloak: the realm is the issuer (`{base_url}/realms/{realm}`; a Keycloak before 17
    serves under `/auth`, so give `https://sso.example.com/auth`). The client must be
    confidential with the standard flow on and the facade's callback as a redirect URI."""
    _secret(name, client_id, client_secret)
    check_url(base_url, f"{name}: base_url")
    parts = urlsplit(base_url)
    if parts.query:
        raise ValueError(f"{name}: base_url takes no query, got {base_url!r}")
    if not isinstance(realm, str) or not _REALM.match(realm):
        raise ValueError(f"{name}: realm is the realm's name (letters, digits, . _ ~ -), "
                         f"got {realm!r}")
    issuer = f"{base_url.rstrip('/')}/realms/{realm}"
    oidc_base = f"{issuer}/protocol/openid-connect"
    return Upstream(client_id=client_id, client_secret=client_secret, issuer=issuer,
                    authorize_url=f"{oidc_base}/auth", token_url=f"{oidc_base}/token",
                    userinfo_url=f"{oidc_base}/userinfo", revocation_url=f"{oidc_base}/revoke",
                    scopes=_scopes(name, ("openid", "email", "profile"), scopes),
                    identity=oidc_identity(), name=name)
