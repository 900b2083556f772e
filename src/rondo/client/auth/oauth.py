"""`OAuth`: sign in as a user with the authorization code grant, PKCE S256 and RFC 8707
resource indicators; the client identity comes from pre-registered credentials, a client ID
metadata document, or dynamic client registration, always bound to one issuer.

    auth = OAuth(redirect=LoopbackRedirect(), store=FileTokenStore.default())
    async with rondo.Client("https://mcp.example.com/mcp", auth=auth) as client: ...
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import httpx

from rondo.client.auth.bearer import BearerAuth, Guard
from rondo.client.auth.discovery import ServerMetadata
from rondo.client.auth.errors import (
    AuthError,
    AuthorizationDenied,
    DiscoveryError,
    RegistrationError,
)
from rondo.client.auth.fetch import exchange
from rondo.client.auth.redirect import LoopbackRedirect, Redirect, callback_params
from rondo.client.auth.store import TokenStore, client_key
from rondo.client.auth.tokens import ClientIdentity, Token, client_auth, request_token

_SECRET_METHODS = ("client_secret_basic", "client_secret_post")


def pkce_pair() -> tuple[str, str]:
    """A fresh code verifier (RFC 7636: 43-128 unreserved characters) and its S256 challenge."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


class OAuth(BearerAuth):
    """User sign-in for `rondo.Client` (`Client(url, auth=OAuth(...))`).

    Identity, in the spec's order of preference: `client_id` (+ `client_secret`) for
    pre-registered credentials, bound to `client_issuer` (or to the first issuer they are
    used with); `client_metadata_url` when the authorization server supports client ID
    metadata documents; else dynamic registration (`client_name`, `application_type`).
    `redirect` performs the browser round trip (default `LoopbackRedirect()`). `scopes` are
    added to what the server asks for; `offline_access` asks for refresh tokens where the
    authorization server offers them. `store` keeps tokens and registrations (memory by
    default). `max_attempts` bounds sign-ins per request; `timeout` each OAuth exchange.
    `dpop=True` asks for DPoP-bound tokens where the authorization server supports them
    (the server must then accept the DPoP scheme too).
    """

    def __init__(
        self,
        *,
        redirect: Redirect | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        client_issuer: str | None = None,
        token_endpoint_auth_method: str | None = None,
        client_metadata_url: str | None = None,
        client_name: str = "rondo",
        application_type: str = "native",
        client_metadata: Mapping[str, Any] | None = None,
        scopes: Sequence[str] | None = None,
        offline_access: bool = True,
        store: TokenStore | None = None,
        timeout: float = 10.0,
        max_attempts: int = 3,
        refresh_margin: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
        dpop: bool = False,
    ) -> None:
        super().__init__(scopes=scopes, store=store, timeout=timeout, max_attempts=max_attempts,
                         refresh_margin=refresh_margin, transport=transport, dpop=dpop)
        if client_secret is not None and client_id is None:
            raise ValueError("client_secret needs client_id")
        if client_metadata_url is not None:
            parts = urlsplit(client_metadata_url)
            if parts.scheme != "https" or parts.path in ("", "/"):
                raise ValueError("client_metadata_url must be an https URL with a path")
        if application_type not in ("native", "web"):
            raise ValueError("application_type must be 'native' or 'web'")
        if token_endpoint_auth_method not in (None, "none", *_SECRET_METHODS):
            raise ValueError(f"unsupported token_endpoint_auth_method {token_endpoint_auth_method!r}")
        self.redirect: Redirect = redirect if redirect is not None else LoopbackRedirect()
        self.client_id = client_id
        self.client_secret = client_secret
        self.client_issuer = client_issuer
        self.token_endpoint_auth_method = token_endpoint_auth_method
        self.client_metadata_url = client_metadata_url
        self.client_name = client_name
        self.application_type = application_type
        self.client_metadata = dict(client_metadata or {})
        self.offline_access = offline_access

    # -- identity --------------------------------------------------------------------------

    async def _identity(self, http: httpx.AsyncClient, metadata: ServerMetadata, *, register: bool) -> ClientIdentity | None:
        issuer = metadata.issuer
        redirect_uri = self.redirect.redirect_uri
        if self.client_id is not None:
            if self.client_issuer is None:
                self.client_issuer = issuer  # bind to the first issuer they are used with
            if self.client_issuer != issuer:
                raise RegistrationError(
                    f"the pre-registered client {self.client_id!r} belongs to {self.client_issuer}, but "
                    f"the server now names {issuer}: not reusing it there (register a client at {issuer})")
            method = self.token_endpoint_auth_method or _secret_method(metadata, self.client_secret)
            return ClientIdentity(self.client_id, self.client_secret, method, issuer, (redirect_uri,), "pre-registered")
        if self.client_metadata_url is not None and metadata.cimd_supported:
            return ClientIdentity(self.client_metadata_url, None, "none", issuer, (redirect_uri,), "metadata-document")
        stored = ClientIdentity.from_json(await self.store.get(client_key(issuer)) or {})
        if stored is not None and stored.issuer == issuer and (not register or redirect_uri in stored.redirect_uris):
            return stored
        if not register:
            return None
        return await self._register(http, metadata, redirect_uri)

    async def _register(self, http: httpx.AsyncClient, metadata: ServerMetadata, redirect_uri: str) -> ClientIdentity:
        if metadata.registration_endpoint is None:
            raise RegistrationError(
                f"{metadata.issuer} offers neither dynamic registration nor client ID metadata documents "
                "(or no client_metadata_url is configured): pass client_id= for a pre-registered client")
        method = self.token_endpoint_auth_method or _registration_method(metadata)
        grants = ["authorization_code"] + (["refresh_token"] if self.offline_access and metadata.offers_refresh else [])
        body = {"client_name": self.client_name, "redirect_uris": [redirect_uri], "grant_types": grants,
                "response_types": ["code"], "token_endpoint_auth_method": method,
                "application_type": self.application_type, **self.client_metadata}
        reply = await exchange(http, "POST", metadata.registration_endpoint, self.limits, json=body,
                               error=RegistrationError)
        doc = reply.json()
        if reply.status not in (200, 201) or not isinstance(doc, dict):
            code = doc.get("error") if isinstance(doc, dict) else None
            raise RegistrationError(f"registration at {metadata.registration_endpoint} refused: HTTP {reply.status}"
                                    + (f" {code}" if isinstance(code, str) else ""))
        client_id, secret = doc.get("client_id"), doc.get("client_secret")
        if not isinstance(client_id, str) or not client_id:
            raise RegistrationError(f"registration at {metadata.registration_endpoint} returned no client_id")
        granted = doc.get("token_endpoint_auth_method")
        if isinstance(granted, str):
            method = granted
        identity = ClientIdentity(client_id, secret if isinstance(secret, str) else None, method,
                                  metadata.issuer, (redirect_uri,), "registered")
        await self.store.set(client_key(metadata.issuer), identity.to_json())
        return identity

    # -- the grant -------------------------------------------------------------------------

    async def _obtain(self, http: httpx.AsyncClient, guard: Guard, scopes: list[str]) -> Token:
        metadata = guard.metadata
        if metadata.authorization_endpoint is None:
            raise DiscoveryError(f"{metadata.issuer} has no authorization_endpoint")
        if "S256" not in (metadata.code_challenge_methods_supported or []):
            raise AuthError(f"{metadata.issuer} does not advertise PKCE S256: refusing to authorize there")
        identity = await self._identity(http, metadata, register=True)
        assert identity is not None
        if self.offline_access and "offline_access" in (metadata.scopes_supported or []):
            scopes = [*scopes, "offline_access"] if "offline_access" not in scopes else scopes
        scope = " ".join(scopes) or None
        redirect_uri = identity.redirect_uris[0]
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(24)
        query = {"response_type": "code", "client_id": identity.client_id, "redirect_uri": redirect_uri,
                 "state": state, "code_challenge": challenge, "code_challenge_method": "S256",
                 "resource": guard.resource.resource}
        if scope:
            query["scope"] = scope
        callback = await self.redirect.authorize(_with_query(metadata.authorization_endpoint, query))
        code = _check_response(callback_params(callback, redirect_uri), state, metadata)
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
                "code_verifier": verifier, "resource": guard.resource.resource}
        if scope:  # repeated so servers that scope tokens from the token request agree
            form["scope"] = scope
        headers = client_auth(identity, form)
        return await request_token(http, metadata.token_endpoint, form, headers, self.limits,
                                   issuer=metadata.issuer, resource=guard.resource.resource,
                                   requested_scope=scope, dpop=self._dpop_for(metadata))


def _check_response(params: dict[str, str], state: str, metadata: ServerMetadata) -> str:
    """RFC 6749 state, then RFC 9207 `iss` (exact string comparison, before looking at any
    error), then the code."""
    if not secrets.compare_digest(params.get("state", ""), state):
        raise AuthorizationDenied("the authorization response carries the wrong state")
    iss = params.get("iss")
    if iss is not None and iss != metadata.issuer:
        raise AuthorizationDenied(
            f"the authorization response comes from issuer {iss!r}, not {metadata.issuer!r}: refused")
    if iss is None and metadata.iss_parameter_supported:
        raise AuthorizationDenied(
            f"{metadata.issuer} promises an iss parameter, and the authorization response has none: refused")
    if "error" in params:
        raise AuthorizationDenied(f"authorization refused by {metadata.issuer}: {params['error'][:100]}")
    code = params.get("code")
    if not code:
        raise AuthorizationDenied("the authorization response has no code")
    return code


def _with_query(url: str, params: dict[str, str]) -> str:
    parts = urlsplit(url)
    query = "&".join(q for q in (parts.query, urlencode(params)) if q)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def _supported(metadata: ServerMetadata) -> list[str]:
    # RFC 8414 §2: absent means client_secret_basic only.
    return metadata.token_endpoint_auth_methods_supported or ["client_secret_basic"]


def _secret_method(metadata: ServerMetadata, secret: str | None) -> str:
    if secret is None:
        return "none"
    supported = _supported(metadata)
    return next((m for m in _SECRET_METHODS if m in supported), "client_secret_basic")


def _registration_method(metadata: ServerMetadata) -> str:
    supported = _supported(metadata)
    return next((m for m in ("none", *_SECRET_METHODS) if m in supported), "none")
