"""`ResourceServer`: the one object that makes a rondo HTTP endpoint an OAuth 2.1 resource
server. Everything about it that can be wrong is found in `__init__`, at start-up."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from .cache import TokenCache
from .errors import InvalidToken, TokenVerifier
from .principal import Principal
from .scopes import Hierarchy, check_scopes, expander
from .urls import check_url

log = logging.getLogger("rondo.auth")

WELL_KNOWN = "/.well-known/oauth-protected-resource"
DEFAULT_MAX_TOKEN = 8 * 1024


class ResourceServer:
    """Protect a server's HTTP endpoint with OAuth bearer tokens.

    - `resource`: the canonical URL of the MCP endpoint (`https://mcp.example.com/mcp`); tokens
      must name it in `aud` (RFC 8707). `audience` adds other accepted `aud` values (an
      Auth0-style API identifier, say).
    - `issuer` / `issuers`: the authorization server(s) whose tokens are accepted, exactly as
      their metadata spells `issuer`; https (http only on loopback).
    - `verifier`: how a token is checked; default a `JwtVerifier` for those issuers and
      audiences. An `IntrospectionVerifier` or any `TokenVerifier` works too.
    - `scopes_supported`: advertised in the protected resource metadata (and the 401 challenge
      when the server requires no scope of its own); `required_scopes`: needed for every request.
    - `scope_hierarchy`: `{"files:write": ["files:read"]}` (a broader scope implies narrower
      ones, transitively) or a callable `granted -> implied`.
    - `endpoints`: set by `rondo.auth.facade.Facade.resource_server()`: the facade's own
      paths (`/authorize`, `/token`, ...) served by the same HTTP app.
    - `list_filter`: `"hide"` (default) lists only the components the token may use (such lists
      are `cacheScope: "private"`); `"show"` lists everything and refuses at call time.
    """

    def __init__(
        self,
        *,
        resource: str | None = None,
        issuer: str | None = None,
        issuers: Iterable[str] | None = None,
        audience: str | Iterable[str] | None = None,
        verifier: TokenVerifier | None = None,
        scopes_supported: Iterable[str] = (),
        required_scopes: Iterable[str] = (),
        scope_hierarchy: Hierarchy | None = None,
        list_filter: str = "hide",
        resource_name: str | None = None,
        resource_documentation: str | None = None,
        token_cache_size: int = 10_000,
        max_token_length: int = DEFAULT_MAX_TOKEN,
        retry_after: int = 5,
        clock: Callable[[], float] = time.time,
        endpoints: Any = None,
    ) -> None:
        self.resource = check_url(resource, "ResourceServer resource (the MCP endpoint URL)")
        if issuer is not None and issuers is not None:
            raise ValueError("give issuer= or issuers=, not both")
        found = [issuer] if issuer is not None else list(issuers or ())
        if not found:
            raise ValueError("ResourceServer needs the authorization server's issuer")
        self.issuers = tuple(check_url(i, "issuer") for i in found)
        extra = () if audience is None else (audience,) if isinstance(audience, str) else tuple(audience)
        self.audiences = (self.resource, *(a for a in extra if a != self.resource))
        self.scopes_supported = check_scopes(scopes_supported, "scopes_supported")
        self.required_scopes = check_scopes(required_scopes, "required_scopes")
        self.expand = expander(scope_hierarchy)
        if list_filter not in ("hide", "show"):
            raise ValueError("list_filter must be 'hide' or 'show'")
        self.list_filter = list_filter
        if resource_documentation is not None:
            check_url(resource_documentation, "resource_documentation")
        self.resource_name = resource_name
        self.resource_documentation = resource_documentation
        if not isinstance(max_token_length, int) or max_token_length < 64:
            raise ValueError("max_token_length must be an integer of at least 64")
        self.max_token_length = max_token_length
        self.retry_after = int(retry_after)
        if verifier is None:
            from .jwt_verifier import JwtVerifier

            verifier = JwtVerifier(self.issuers, self.audiences)
        if not callable(getattr(verifier, "verify", None)):
            raise TypeError("verifier must have an async verify(token) -> Principal method")
        self.verifier = verifier
        self.cache = TokenCache(token_cache_size, clock)
        parts = urlsplit(self.resource)
        origin = f"{parts.scheme}://{parts.netloc}"
        path = parts.path.rstrip("/")
        # RFC 9728 §3.1: the well-known segment goes between host and path.
        self.metadata_path = WELL_KNOWN + path
        self.metadata_url = origin + self.metadata_path
        self.metadata_paths = frozenset({self.metadata_path} | ({WELL_KNOWN} if not path else set()))
        self.endpoint_path = path or "/"
        # An ASGI app answering more paths beside the endpoint (the authorization facade:
        # `Facade.resource_server()` sets it); `endpoints.paths` names them exactly.
        self.endpoints = endpoints
        self.endpoint_paths: frozenset[str] = frozenset(endpoints.paths) if endpoints is not None else frozenset()

    # -- what clients discover --------------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        """The RFC 9728 protected resource metadata document."""
        doc: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": list(self.issuers),
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported:
            doc["scopes_supported"] = list(self.scopes_supported)
        if self.resource_name is not None:
            doc["resource_name"] = self.resource_name
        if self.resource_documentation is not None:
            doc["resource_documentation"] = self.resource_documentation
        return doc

    def challenge_scopes(self) -> tuple[str, ...]:
        """The scope a 401 names: what every request needs, else the basic set advertised."""
        return self.required_scopes or self.scopes_supported

    # -- checking a token ---------------------------------------------------------------------

    async def authenticate(self, token: str, *, key: bytes | None = None) -> Principal:
        """The verified principal of `token` (cached by digest for its lifetime), or
        InvalidToken / VerifierUnavailable. `key` overrides the cache key (the HTTP guard uses
        the digest of the whole Authorization header, so a hit needs no parsing)."""
        cache = self.cache
        digest = cache.digest(token) if key is None else key
        principal = cache.get(digest)
        if principal is not None:
            return principal
        try:
            principal = await self.verifier.verify(token)
        except InvalidToken as exc:
            log.debug("rondo.auth: token refused: %s", exc.reason)
            raise
        if not isinstance(principal, Principal):
            raise TypeError("a TokenVerifier must return a rondo.auth.Principal")
        if principal.subject is None and principal.client_id is None:
            # Nothing to bind state and sessions to: every such caller would share one identity.
            log.debug("rondo.auth: token refused: no sub and no client_id")
            raise InvalidToken("The access token names no subject or client")
        principal.widen_scopes(self.expand)  # a frozenset of its scopes
        principal.hold_token(token)  # for RFC 8693 exchange (`rondo.auth.TokenExchange`) only
        cache.put(digest, principal, float(getattr(self.verifier, "cache_ttl", 0.0)))
        return principal

    def __repr__(self) -> str:
        return f"ResourceServer(resource={self.resource!r}, issuers={list(self.issuers)!r})"
