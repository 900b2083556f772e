"""The upstream identity provider the facade signs users in with: a plain declaration.

The facade is a confidential OAuth client with one fixed registration at the provider (GitHub,
Google, Entra ID, Auth0, Keycloak, any OpenID Connect provider). An `Upstream` says where the
provider's endpoints are, which scopes to ask for, how the facade authenticates at its token
endpoint, and how the signed-in user's identity is read. A provider preset is a function that
returns one:

    def github(client_id: str, client_secret: str) -> Upstream:
        return Upstream(
            client_id=client_id, client_secret=client_secret,
            authorize_url="https://github.com/login/oauth/authorize",
            token_url="https://github.com/login/oauth/access_token",
            userinfo_url="https://api.github.com/user",
            scopes=("read:user",), subject_claim="id", pkce=False,
            userinfo_headers={"accept": "application/vnd.github+json"},
        )

With `issuer=` and no endpoints, the endpoints come from OpenID Connect discovery
(`{issuer}/.well-known/openid-configuration`, its `issuer` compared exactly) at the first
sign-in. `identity` overrides how the user is read (an ID token, a provider API); the default
reads `userinfo_url` and takes `subject_claim` as the subject.

This module imports nothing beyond the stdlib: presets are declarations, cheap to import.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

TokenAuth = Literal["client_secret_basic", "client_secret_post", "none"]


@dataclass(frozen=True)
class UpstreamTokens:
    """What the provider's token endpoint returned (kept encrypted at rest by the facade).

    `expires_at` is unix seconds, None when the provider did not say (GitHub's classic OAuth
    apps); `raw` is the whole token response, for a preset that needs a provider-specific field.
    `nonce` is not from the provider: it is the OpenID `nonce` the facade sent with the sign-in
    that produced these tokens (None on a refresh, or when no `openid` scope was asked for), for
    the identity reader to compare with the ID token's.
    """

    access_token: str
    token_type: str = "Bearer"
    refresh_token: str | None = None
    expires_at: float | None = None
    id_token: str | None = None
    scope: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)
    nonce: str | None = None

    def __repr__(self) -> str:  # never show a token
        return (f"UpstreamTokens(token_type={self.token_type!r}, expires_at={self.expires_at!r}, "
                f"refresh={'yes' if self.refresh_token else 'no'}, scope={self.scope!r})")


@dataclass(frozen=True)
class Identity:
    """Who signed in upstream: `subject` (stable, unique at the provider, a string) and the
    claims the provider gave (name, email, login, ...). Tools read it as `ctx.auth.claims["upstream"]`."""

    subject: str
    claims: Mapping[str, Any] = field(default_factory=dict)


class UpstreamHttp(Protocol):
    """The bounded HTTP the facade lends an identity reader: a time limit for the whole exchange,
    a size cap on the body, a JSON object from `get_json` and a JSON array from
    `get_json_array` (for the few provider reads that answer one, such as GitHub's
    `/user/emails`), anything else refused. Failures raise `UpstreamError`."""

    async def get_json(self, url: str, *, headers: Mapping[str, str] | None = None) -> dict[str, Any]: ...

    async def get_json_array(self, url: str, *,
                             headers: Mapping[str, str] | None = None) -> list[Any]: ...


class IdentityReader(Protocol):
    """Reads the signed-in user from the provider after the code exchange. Raise `UpstreamError`
    when the provider cannot say (the sign-in then ends with `temporarily_unavailable`)."""

    def __call__(self, http: UpstreamHttp, tokens: UpstreamTokens,
                 upstream: Upstream) -> Awaitable[Identity]: ...


class UpstreamError(Exception):
    """The provider is down, slow, or answered something unusable. `reason` is for the server's
    log (never a token); clients get the RFC error code only."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Upstream:
    """One fixed client registration at an identity provider.

    - `client_id`, `client_secret`: the facade's registration there (`token_auth` says how the
      secret is sent: HTTP Basic, form fields, or not at all for a public registration).
    - `authorize_url`, `token_url`, `userinfo_url`, `revocation_url`: the provider's endpoints;
      `issuer` alone (an OpenID provider) finds them through discovery.
    - `scopes`: asked for at the provider (not the facade's own scopes, which clients request).
    - `subject_claim`: the userinfo member that names the user (`sub`; GitHub's is `id`).
    - `identity`: a custom reader instead of userinfo (see `IdentityReader`).
    - `pkce`: send PKCE S256 to the provider too (GitHub's OAuth apps ignore it; harmless).
      When `openid` is among the scopes the facade also sends a fresh OpenID `nonce`, kept with
      the pending sign-in (like `state`) and handed to the reader as `UpstreamTokens.nonce`.
    - `extra_authorize_params` / `extra_token_params`: provider quirks (Google's
      `access_type=offline`, Auth0's `audience`).
    - `token_headers` / `userinfo_headers`: extra request headers (GitHub answers its token
      endpoint in JSON only with `accept: application/json`, which is always sent).
    - `timeout`: seconds for one whole exchange with the provider; `max_bytes` caps a body.
    """

    client_id: str
    client_secret: str | None = None
    authorize_url: str | None = None
    token_url: str | None = None
    userinfo_url: str | None = None
    revocation_url: str | None = None
    issuer: str | None = None
    scopes: tuple[str, ...] = ("openid",)
    subject_claim: str = "sub"
    identity: IdentityReader | None = None
    token_auth: TokenAuth = "client_secret_basic"
    pkce: bool = True
    extra_authorize_params: Mapping[str, str] = field(default_factory=dict)
    extra_token_params: Mapping[str, str] = field(default_factory=dict)
    token_headers: Mapping[str, str] = field(default_factory=dict)
    userinfo_headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 10.0
    max_bytes: int = 256 * 1024
    name: str = "upstream"

    def __post_init__(self) -> None:
        if not isinstance(self.client_id, str) or not self.client_id:
            raise ValueError("Upstream needs the facade's client_id at the provider")
        if self.token_auth != "none" and not self.client_secret:
            raise ValueError(f"Upstream token_auth={self.token_auth!r} needs a client_secret")
        if self.token_auth not in ("client_secret_basic", "client_secret_post", "none"):
            raise ValueError(f"unknown token_auth {self.token_auth!r}")
        if self.issuer is None and (self.authorize_url is None or self.token_url is None):
            raise ValueError("Upstream needs authorize_url and token_url, or an OpenID issuer "
                             "to discover them")
        if self.identity is None and self.userinfo_url is None and self.issuer is None:
            raise ValueError("Upstream needs a userinfo_url or an identity reader to know who "
                             "signed in")
        if isinstance(self.scopes, str):
            raise ValueError("Upstream scopes is a tuple of strings, not one string")
        if not isinstance(self.timeout, int | float) or not 0 < self.timeout <= 120:
            raise ValueError("Upstream timeout must be between 0 and 120 seconds")
        from ..urls import check_url

        for what in ("authorize_url", "token_url", "userinfo_url", "revocation_url", "issuer"):
            value = getattr(self, what)
            if value is not None:
                check_url(value, f"Upstream {what}")

    def with_endpoints(self, doc: Mapping[str, Any]) -> Upstream:
        """This declaration with the endpoints an OpenID discovery document names filled in
        (ones given explicitly win). The facade calls it at the first sign-in (per worker) when `issuer` is set."""
        from dataclasses import replace

        def pick(mine: str | None, key: str) -> str | None:
            value = doc.get(key)
            return mine if mine is not None else value if isinstance(value, str) else None

        return replace(self,
                       authorize_url=pick(self.authorize_url, "authorization_endpoint"),
                       token_url=pick(self.token_url, "token_endpoint"),
                       userinfo_url=pick(self.userinfo_url, "userinfo_endpoint"),
                       revocation_url=pick(self.revocation_url, "revocation_endpoint"))

    def __repr__(self) -> str:  # never show the secret
        where = self.issuer or self.authorize_url
        return f"Upstream(name={self.name!r}, client_id={self.client_id!r}, at={where!r})"


async def userinfo_identity(http: UpstreamHttp, tokens: UpstreamTokens, upstream: Upstream) -> Identity:
    """The default reader: GET `userinfo_url` with the upstream access token; the subject is
    `subject_claim` (a string, or an integer such as GitHub's user id, written as a string)."""
    if upstream.userinfo_url is None:
        raise UpstreamError("no userinfo endpoint to read the identity from")
    headers = {**upstream.userinfo_headers, "authorization": f"Bearer {tokens.access_token}"}
    doc = await http.get_json(upstream.userinfo_url, headers=headers)
    subject = doc.get(upstream.subject_claim)
    if isinstance(subject, bool) or not isinstance(subject, str | int) or subject == "":
        raise UpstreamError(f"userinfo has no usable {upstream.subject_claim!r}")
    return Identity(subject=str(subject), claims=doc)
