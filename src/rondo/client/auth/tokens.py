"""Tokens and the token endpoint: the grant requests, client authentication by the method the
authorization server supports, and the response check."""

from __future__ import annotations

import base64
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx

from rondo.client.auth.errors import TokenError
from rondo.client.auth.fetch import Limits, exchange

if TYPE_CHECKING:
    from rondo.client.auth.dpop import DpopKey

JWT_BEARER_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


@dataclass
class Token:
    access_token: str
    token_type: str = "Bearer"
    expires_at: float | None = None
    refresh_token: str | None = None
    scope: str | None = None  # granted (or, when the server did not say, requested) scopes
    issuer: str = ""
    resource: str = ""
    jkt: str | None = None  # DPoP: the thumbprint of the key the token is bound to

    def __repr__(self) -> str:  # never show the secrets, even in a traceback
        return (f"Token(issuer={self.issuer!r}, resource={self.resource!r}, scope={self.scope!r}, "
                f"expires_at={self.expires_at!r}, refresh={self.refresh_token is not None})")

    def expires_within(self, seconds: float) -> bool:
        return self.expires_at is not None and self.expires_at - time.time() <= seconds

    @property
    def scopes(self) -> list[str]:
        return self.scope.split() if self.scope else []

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Token | None:
        """The stored token, or None when the entry is not a well-typed token (a store is
        outside input: a hand-edited file must not crash a request)."""
        access, expires = data.get("access_token"), data.get("expires_at")
        if not isinstance(access, str) or not access:
            return None
        if expires is not None and (isinstance(expires, bool) or not isinstance(expires, int | float)):
            return None
        fields: dict[str, Any] = {"access_token": access, "expires_at": expires}
        for name, default in (("token_type", "Bearer"), ("issuer", ""), ("resource", "")):
            value = data.get(name, default)
            if not isinstance(value, str):
                return None
            fields[name] = value
        for name in ("refresh_token", "scope", "jkt"):
            value = data.get(name)
            if value is not None and not isinstance(value, str):
                return None
            fields[name] = value
        return cls(**fields)


@dataclass
class ClientIdentity:
    """A client as one authorization server knows it."""

    client_id: str
    client_secret: str | None = None
    token_endpoint_auth_method: str = "none"
    issuer: str = ""
    redirect_uris: tuple[str, ...] = ()
    source: str = "registered"  # "pre-registered", "metadata-document" or "registered"

    def __repr__(self) -> str:
        return (f"ClientIdentity(client_id={self.client_id!r}, issuer={self.issuer!r}, "
                f"method={self.token_endpoint_auth_method!r}, source={self.source!r})")

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["redirect_uris"] = list(self.redirect_uris)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClientIdentity | None:
        client_id, uris = data.get("client_id"), data.get("redirect_uris") or []
        if not isinstance(client_id, str) or not client_id or not isinstance(uris, list):
            return None
        fields: dict[str, Any] = {"client_id": client_id, "redirect_uris": tuple(u for u in uris if isinstance(u, str))}
        for name, default in (("token_endpoint_auth_method", "none"), ("issuer", ""), ("source", "registered")):
            value = data.get(name, default)
            if not isinstance(value, str):
                return None
            fields[name] = value
        secret = data.get("client_secret")
        if secret is not None and not isinstance(secret, str):
            return None
        fields["client_secret"] = secret
        return cls(**fields)


def client_auth(
    identity: ClientIdentity, form: dict[str, str], assertion: str | None = None
) -> dict[str, str]:
    """Add client authentication to a token request; returns extra headers."""
    method = identity.token_endpoint_auth_method
    if method == "client_secret_basic":
        if identity.client_secret is None:
            raise TokenError("client_secret_basic needs a client secret, and none is known")
        # RFC 6749 §2.3.1: form-encode both parts before joining them.
        pair = f"{quote(identity.client_id, safe='')}:{quote(identity.client_secret, safe='')}"
        return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode("ascii")}
    if method == "client_secret_post":
        if identity.client_secret is None:
            raise TokenError("client_secret_post needs a client secret, and none is known")
        form["client_id"] = identity.client_id
        form["client_secret"] = identity.client_secret
        return {}
    if method == "private_key_jwt":
        if assertion is None:
            raise TokenError("private_key_jwt needs a signing key, and none is configured")
        form["client_id"] = identity.client_id
        form["client_assertion_type"] = JWT_BEARER_ASSERTION
        form["client_assertion"] = assertion
        return {}
    form["client_id"] = identity.client_id
    return {}


async def request_token(
    http: httpx.AsyncClient,
    endpoint: str,
    form: dict[str, str],
    headers: dict[str, str],
    limits: Limits,
    *,
    issuer: str,
    resource: str,
    requested_scope: str | None,
    previous_refresh: str | None = None,
    dpop: DpopKey | None = None,
) -> Token:
    for _ in range(2):  # a second try only for a DPoP nonce the server asked for (RFC 9449 §8)
        sent = dict(headers)
        if dpop is not None:
            sent["DPoP"] = dpop.proof("POST", endpoint)
        reply = await exchange(http, "POST", endpoint, limits, data=form, headers=sent, error=TokenError)
        body = reply.json()
        nonce_asked = (dpop is not None and reply.status == 400 and isinstance(body, dict)
                       and body.get("error") == "use_dpop_nonce")
        if not (nonce_asked and dpop is not None and dpop.remember_nonce(endpoint, reply.headers)):
            break
    if reply.status != 200:
        code = body.get("error") if isinstance(body, dict) else None
        desc = body.get("error_description") if isinstance(body, dict) else None
        detail = f": {_printable(code)}" if isinstance(code, str) else ""
        detail += f" ({_printable(desc)})" if isinstance(desc, str) else ""
        raise TokenError(f"token endpoint {endpoint} answered HTTP {reply.status}{detail}")
    if not isinstance(body, dict) or not isinstance(body.get("access_token"), str) or not body["access_token"]:
        raise TokenError(f"token endpoint {endpoint} answered without an access_token")
    token_type = body.get("token_type")
    kinds = ("bearer", "dpop") if dpop is not None else ("bearer",)
    if not isinstance(token_type, str) or token_type.lower() not in kinds:
        raise TokenError(f"token endpoint {endpoint} issued a {token_type!r} token, not a "
                         + " or ".join(k.capitalize() if k == "bearer" else "DPoP" for k in kinds) + " token")
    bound = token_type.lower() == "dpop"
    expires_in = body.get("expires_in")
    expires_at = time.time() + expires_in if isinstance(expires_in, int | float) and expires_in > 0 else None
    refresh = body.get("refresh_token")
    scope = body.get("scope")
    return Token(
        access_token=body["access_token"],
        token_type="DPoP" if bound else "Bearer",
        expires_at=expires_at,
        # RFC 6749 §6: a refresh response without a new refresh token keeps the old one.
        refresh_token=refresh if isinstance(refresh, str) and refresh else previous_refresh,
        scope=scope if isinstance(scope, str) else requested_scope,
        issuer=issuer,
        resource=resource,
        jkt=dpop.thumbprint if bound and dpop is not None else None,
    )


def _printable(text: str) -> str:
    return "".join(ch for ch in text[:200] if ch.isprintable())
