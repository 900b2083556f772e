"""rondo.auth: an OAuth 2.1 resource server for rondo's HTTP transport.

    auth = rondo.auth.ResourceServer(
        resource="https://mcp.example.com/mcp",
        issuer="https://login.example.com/",
        scopes_supported=["mcp:use"],
    )
    server = rondo.Server("files", auth=auth)

Nothing here is imported unless a server is configured with `auth=`; the JOSE library (PyJWT,
the `auth` extra) only when a JWT verifier is built. See docs/auth.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..wire.lazy import lazy_exports

_EXPORTS = {
    "ResourceServer": "rondo.auth.config",
    "Principal": "rondo.auth.principal",
    "principal_of": "rondo.auth.principal",
    "TokenVerifier": "rondo.auth.errors",
    "InvalidToken": "rondo.auth.errors",
    "VerifierUnavailable": "rondo.auth.errors",
    "JwtVerifier": "rondo.auth.jwt_verifier",
    "IntrospectionVerifier": "rondo.auth.introspection",
    "TokenExchange": "rondo.auth.exchange",
    "ExchangedToken": "rondo.auth.exchange",
    "TokenExchangeError": "rondo.auth.exchange",
    "ExchangeRefused": "rondo.auth.exchange",
    "ExchangeUnavailable": "rondo.auth.exchange",
}

if TYPE_CHECKING:
    from .config import ResourceServer as ResourceServer
    from .errors import InvalidToken as InvalidToken
    from .errors import TokenVerifier as TokenVerifier
    from .errors import VerifierUnavailable as VerifierUnavailable
    from .exchange import ExchangedToken as ExchangedToken
    from .exchange import ExchangeRefused as ExchangeRefused
    from .exchange import ExchangeUnavailable as ExchangeUnavailable
    from .exchange import TokenExchange as TokenExchange
    from .exchange import TokenExchangeError as TokenExchangeError
    from .introspection import IntrospectionVerifier as IntrospectionVerifier
    from .jwt_verifier import JwtVerifier as JwtVerifier
    from .principal import Principal as Principal
    from .principal import principal_of as principal_of


__getattr__ = lazy_exports("rondo.auth", globals(), _EXPORTS)


__all__ = list(_EXPORTS)
