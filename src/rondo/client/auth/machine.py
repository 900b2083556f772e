"""`ClientCredentials`: machine-to-machine sign-in (OAuth client_credentials grant, the MCP
client-credentials extension), authenticating with a client secret or a private-key JWT
assertion (RFC 7523; signed with PyJWT, the optional `auth` extra the server side uses too)."""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from typing import Any

import httpx

from rondo.client.auth.bearer import BearerAuth, Guard
from rondo.client.auth.discovery import ServerMetadata
from rondo.client.auth.errors import RegistrationError
from rondo.client.auth.store import TokenStore
from rondo.client.auth.tokens import ClientIdentity, Token, client_auth, request_token

_ALGORITHMS = ("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA")


class ClientCredentials(BearerAuth):
    """`Client(url, auth=ClientCredentials("id", client_secret="..."))`, or with
    `private_key=PEM` (and `signing_algorithm`) for `private_key_jwt`. `issuer` binds the
    credentials to one authorization server (else to the first one they are used with)."""

    def __init__(
        self,
        client_id: str,
        *,
        client_secret: str | None = None,
        private_key: str | bytes | None = None,
        signing_algorithm: str = "RS256",
        key_id: str | None = None,
        token_endpoint_auth_method: str | None = None,
        issuer: str | None = None,
        scopes: Sequence[str] | None = None,
        store: TokenStore | None = None,
        timeout: float = 10.0,
        max_attempts: int = 2,
        assertion_lifetime: float = 300.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(scopes=scopes, store=store, timeout=timeout, max_attempts=max_attempts,
                         transport=transport)
        if (client_secret is None) == (private_key is None):
            raise ValueError("ClientCredentials needs exactly one of client_secret and private_key")
        self.client_id = client_id
        self.client_secret = client_secret
        self.issuer = issuer
        self.token_endpoint_auth_method = token_endpoint_auth_method
        self.assertion_lifetime = assertion_lifetime
        self.key_id = key_id
        self.signing_algorithm = signing_algorithm
        self._key: Any = None
        if private_key is not None:
            if signing_algorithm not in _ALGORITHMS:
                raise ValueError(f"signing_algorithm must be one of {', '.join(_ALGORITHMS)}")
            self._key = _import_private_key(private_key)  # fails now, not at the first request

    async def _identity(self, http: httpx.AsyncClient, metadata: ServerMetadata, *, register: bool) -> ClientIdentity | None:
        if self.issuer is None:
            self.issuer = metadata.issuer
        if self.issuer != metadata.issuer:
            raise RegistrationError(
                f"client {self.client_id!r} belongs to {self.issuer}, but the server now names "
                f"{metadata.issuer}: not sending its credentials there")
        supported = metadata.token_endpoint_auth_methods_supported or ["client_secret_basic"]
        if self._key is not None:
            method = "private_key_jwt"
        else:
            method = self.token_endpoint_auth_method or next(
                (m for m in ("client_secret_basic", "client_secret_post") if m in supported), "client_secret_basic")
        return ClientIdentity(self.client_id, self.client_secret, method, metadata.issuer, (), "pre-registered")

    def _client_assertion(self, identity: ClientIdentity, metadata: ServerMetadata) -> str | None:
        if self._key is None:
            return None
        import jwt

        now = int(time.time())
        claims = {"iss": self.client_id, "sub": self.client_id, "aud": metadata.issuer,
                  "iat": now, "exp": now + int(self.assertion_lifetime), "jti": secrets.token_urlsafe(16)}
        headers: dict[str, Any] = {"typ": "JWT"}
        if self.key_id:
            headers["kid"] = self.key_id
        return str(jwt.encode(claims, self._key, algorithm=self.signing_algorithm, headers=headers))

    async def _obtain(self, http: httpx.AsyncClient, guard: Guard, scopes: list[str]) -> Token:
        metadata = guard.metadata
        identity = await self._identity(http, metadata, register=True)
        assert identity is not None
        scope = " ".join(scopes) or None
        form = {"grant_type": "client_credentials", "resource": guard.resource.resource}
        if scope:
            form["scope"] = scope
        headers = client_auth(identity, form, self._client_assertion(identity, metadata))
        return await request_token(http, metadata.token_endpoint, form, headers, self.limits,
                                   issuer=metadata.issuer, resource=guard.resource.resource,
                                   requested_scope=scope, dpop=self._dpop_for(metadata))


def _import_private_key(pem: str | bytes) -> Any:
    try:
        import jwt  # noqa: F401  (PyJWT signs; cryptography parses the key)
        from cryptography.hazmat.primitives.serialization import load_pem_private_key
    except ImportError:  # pragma: no cover - depends on the installed extras
        raise RuntimeError("private-key JWT needs PyJWT: pip install 'rondo-mcp[auth]'") from None
    data = pem.encode() if isinstance(pem, str) else pem
    try:
        return load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"private_key is not an unencrypted PEM private key ({type(exc).__name__})") from None
