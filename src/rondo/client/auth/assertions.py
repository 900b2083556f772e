"""Sign-in with an assertion instead of a user: the RFC 7523 JWT-bearer grant.

- `JwtBearer`: workload identity federation (the MCP WIF extension): trade a JWT the platform
  gives the workload (a Kubernetes service-account token, a cloud identity token) for an
  access token. The assertion is a string or a callable `(issuer, resource) -> str`, sync or
  async, called at each sign-in so short-lived platform tokens stay fresh.
- `EnterpriseAuth`: enterprise-managed authorization (SEP-990): exchange the user's ID token
  at the enterprise IdP for an identity assertion grant (RFC 8693 token exchange, an ID-JAG
  for this authorization server and resource), then present it with the JWT-bearer grant.

A refused assertion is a `TokenError` at once: no retry, no other grant.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import httpx

from rondo.client.auth.bearer import BearerAuth, Guard
from rondo.client.auth.discovery import ServerMetadata
from rondo.client.auth.errors import RegistrationError, TokenError
from rondo.client.auth.fetch import exchange
from rondo.client.auth.store import TokenStore
from rondo.client.auth.tokens import ClientIdentity, Token, client_auth, request_token

JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"

Assertion = str | Callable[[str, str], str | Awaitable[str]]


async def _value(source: Any, *args: Any) -> str:
    value = source(*args) if callable(source) else source
    if inspect.isawaitable(value):
        value = await value
    if not isinstance(value, str) or not value:
        raise TokenError("the assertion provider returned no assertion")
    return value


class JwtBearer(BearerAuth):
    """`Client(url, auth=JwtBearer(platform_jwt, client_id="workload"))`."""

    def __init__(
        self,
        assertion: Assertion,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        issuer: str | None = None,
        scopes: Sequence[str] | None = None,
        store: TokenStore | None = None,
        timeout: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(scopes=scopes, store=store, timeout=timeout, max_attempts=2, transport=transport)
        if client_secret is not None and client_id is None:
            raise ValueError("client_secret needs client_id")
        self.assertion = assertion
        self.client_id = client_id
        self.client_secret = client_secret
        self.issuer = issuer

    async def _identity(self, http: httpx.AsyncClient, metadata: ServerMetadata, *, register: bool) -> ClientIdentity | None:
        if self.issuer is None:
            self.issuer = metadata.issuer
        if self.issuer != metadata.issuer:
            raise RegistrationError(f"these credentials belong to {self.issuer}, not {metadata.issuer}")
        if self.client_id is None:
            return None
        if self.client_secret is None:
            return ClientIdentity(self.client_id, None, "none", metadata.issuer, (), "pre-registered")
        supported = metadata.token_endpoint_auth_methods_supported or ["client_secret_basic"]
        method = "client_secret_post" if "client_secret_basic" not in supported and "client_secret_post" in supported \
            else "client_secret_basic"
        return ClientIdentity(self.client_id, self.client_secret, method, metadata.issuer, (), "pre-registered")

    async def _assertion_for(self, http: httpx.AsyncClient, guard: Guard) -> str:
        return await _value(self.assertion, guard.issuer, guard.resource.resource)

    async def _obtain(self, http: httpx.AsyncClient, guard: Guard, scopes: list[str]) -> Token:
        identity = await self._identity(http, guard.metadata, register=True)
        form = {"grant_type": JWT_BEARER_GRANT, "assertion": await self._assertion_for(http, guard),
                "resource": guard.resource.resource}
        scope = " ".join(scopes) or None
        if scope:
            form["scope"] = scope
        headers = client_auth(identity, form) if identity is not None else {}
        return await request_token(http, guard.metadata.token_endpoint, form, headers, self.limits,
                                   issuer=guard.issuer, resource=guard.resource.resource, requested_scope=scope, dpop=self._dpop_for(guard.metadata))


class EnterpriseAuth(JwtBearer):
    """Enterprise-managed authorization: `id_token` (a string or a callable) from the
    enterprise IdP, exchanged at `idp_token_endpoint` (as `idp_client_id`) for an ID-JAG that
    `client_id`/`client_secret` then present to the MCP server's authorization server."""

    def __init__(
        self,
        *,
        id_token: str | Callable[[], str | Awaitable[str]],
        idp_token_endpoint: str,
        idp_client_id: str,
        client_id: str,
        client_secret: str | None = None,
        idp_client_secret: str | None = None,
        issuer: str | None = None,
        scopes: Sequence[str] | None = None,
        store: TokenStore | None = None,
        timeout: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__("", client_id=client_id, client_secret=client_secret, issuer=issuer, scopes=scopes,
                         store=store, timeout=timeout, transport=transport)
        self.id_token = id_token
        self.idp_token_endpoint = idp_token_endpoint
        self.idp = ClientIdentity(idp_client_id, idp_client_secret,
                                  "client_secret_basic" if idp_client_secret else "none", "", (), "pre-registered")

    async def _assertion_for(self, http: httpx.AsyncClient, guard: Guard) -> str:
        form = {"grant_type": TOKEN_EXCHANGE_GRANT, "requested_token_type": ID_JAG_TYPE,
                "audience": guard.issuer, "resource": guard.resource.resource,
                "subject_token": await _value(self.id_token), "subject_token_type": ID_TOKEN_TYPE}
        if self.scopes:
            form["scope"] = " ".join(self.scopes)
        headers = client_auth(self.idp, form)
        reply = await exchange(http, "POST", self.idp_token_endpoint, self.limits, data=form, headers=headers,
                               error=TokenError)
        body = reply.json()
        if reply.status != 200 or not isinstance(body, dict):
            code = body.get("error") if isinstance(body, dict) else None
            raise TokenError(f"token exchange at {self.idp_token_endpoint} refused: HTTP {reply.status}"
                             + (f" {code}" if isinstance(code, str) else ""))
        if body.get("issued_token_type") != ID_JAG_TYPE or not isinstance(body.get("access_token"), str):
            raise TokenError(f"token exchange at {self.idp_token_endpoint} issued no identity assertion grant")
        return str(body["access_token"])
