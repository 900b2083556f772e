"""Client-side authorization (MCP 2026-07-28 authorization spec, OAuth 2.1).

`OAuth` signs a user in (authorization code + PKCE), `ClientCredentials` a machine; both are
`httpx.Auth` objects given to `rondo.Client(url, auth=...)`. Tokens and registrations live in
a `TokenStore` (`MemoryTokenStore` by default, `FileTokenStore` for terminal tools). The
browser round trip is a `Redirect`: `LoopbackRedirect`, `RedirectHandler` or
`HeadlessRedirect`. Assertion grants: `JwtBearer` (workload identity) and `EnterpriseAuth`
(enterprise-managed authorization). See docs/client.md, "Authorization".
"""

from __future__ import annotations

from rondo.client.auth.assertions import EnterpriseAuth, JwtBearer
from rondo.client.auth.errors import (
    AuthError,
    AuthorizationDenied,
    DiscoveryError,
    InsufficientScope,
    RegistrationError,
    TokenError,
)
from rondo.client.auth.machine import ClientCredentials
from rondo.client.auth.oauth import OAuth
from rondo.client.auth.redirect import HeadlessRedirect, LoopbackRedirect, Redirect, RedirectHandler
from rondo.client.auth.store import FileTokenStore, MemoryTokenStore, TokenStore
from rondo.client.auth.tokens import Token

__all__ = [
    "AuthError",
    "AuthorizationDenied",
    "ClientCredentials",
    "DiscoveryError",
    "EnterpriseAuth",
    "FileTokenStore",
    "HeadlessRedirect",
    "InsufficientScope",
    "JwtBearer",
    "LoopbackRedirect",
    "MemoryTokenStore",
    "OAuth",
    "Redirect",
    "RedirectHandler",
    "RegistrationError",
    "TokenError",
    "Token",
    "TokenStore",
]
