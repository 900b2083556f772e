"""`Facade`: an OAuth 2.1 authorization server for MCP clients, signing users in upstream.

    facade = Facade(issuer="https://mcp.example.com", resource="https://mcp.example.com/mcp",
                    upstream=Upstream(...), secret=FACADE_SECRET, store=RedisStore(url))
    server = rondo.Server("files", auth=facade.resource_server(scopes_supported=["mcp"]))

The server's HTTP app then answers the facade's paths beside `/mcp` (see `paths`). The flow:
`/register` (RFC 7591) -> `/authorize` (PKCE S256, `resource`) -> the facade's consent page
(once per user and client) -> the provider's sign-in -> `/callback` -> the client's redirect
with the facade's code -> `/token` (the facade's signed JWT and a rotating refresh token).

The endpoints are modules of their own, each one job: `discovery.py` (metadata, JWKS),
`registration.py` (`/register`, finding and authenticating clients), `authorize.py`
(`/authorize`, consent), `callback.py`, `token_endpoint.py`, `revocation.py`; the facade's
access tokens are `access_tokens.py`, the provider's tokens kept per grant `upstream_tokens.py`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from ..scopes import check_scopes
from ..urls import check_url
from . import (
    access_tokens,
    authorize,
    callback,
    discovery,
    registration,
    revocation,
    token_endpoint,
)
from . import upstream_tokens as kept
from .clients import Client
from .keys import Keys, Signer
from .store import MemoryStore, Store, StoreFull
from .upstream import Upstream, UpstreamTokens
from .upstream_http import UpstreamClient
from .verifier import FacadeVerifier
from .web import (
    NO_STORE,
    PREFLIGHT,
    BadForm,
    Receive,
    Scope,
    Send,
    send_json,
    send_unavailable,
    with_cors,
)

__all__ = ["ENV_FLEET", "Facade", "FacadeVerifier", "FleetMisconfigured"]

log = logging.getLogger("rondo.auth.facade")

ENV_FLEET = "RONDO_FLEET"


class FleetMisconfigured(ValueError):
    """A multi-worker facade on a store other workers cannot see: refused at start-up."""


class Facade:
    """The authorization-server facade. Everything that can be wrong is found here, at start-up.

    - `issuer`: the facade's own URL (its metadata, `/authorize`, `/token` hang off it); https,
      http only on loopback. `resource`: the MCP endpoint its tokens are for (`aud`).
    - `upstream`: the identity provider (`Upstream`). `secret`: 32+ random bytes shared by every
      worker (seals upstream tokens and the shared RS256 signing key kept in the store, signs
      cookies). `signing_key`: your own (RSA for RS256, P-256 for ES256) instead.
    - `store`: `MemoryStore()` (default, one process), `FileStore(dir)`, `RedisStore(url)`.
    - `scopes_supported`: what clients may ask for (default none: the facade grants no scopes).
    - Lifetimes (seconds): `access_ttl` 300, `refresh_ttl` 30 days, `code_ttl` 60, `flow_ttl`
      600 (consent page and upstream sign-in), `consent_ttl` 90 days, `client_ttl` 90 days.
    - `grace`: seconds after a refresh token is rotated during which presenting it again
      answers with the same successor (concurrent refreshes all succeed); after that, a reuse
      revokes the whole family (RFC 9700 §4.14.2). `verify_ttl`: how long a verified access
      token is trusted without asking the store whether its family was revoked.
    - `registrations_per_minute` per client address and `max_registrations_per_hour` overall:
      the flood bounds on `/register`; `authorizations_per_minute` per address on `/authorize`
      (each one keeps a pending request for `flow_ttl`).
    """

    def __init__(
        self,
        *,
        issuer: str,
        resource: str,
        upstream: Upstream,
        secret: bytes,
        store: Store | None = None,
        scopes_supported: Iterable[str] = (),
        signing_key: Any = None,
        access_ttl: int = 300,
        refresh_ttl: int = 30 * 86400,
        code_ttl: int = 60,
        flow_ttl: int = 600,
        consent_ttl: int = 90 * 86400,
        client_ttl: int = 90 * 86400,
        grace: float = 30.0,
        verify_ttl: float = 10.0,
        registrations_per_minute: int = 20,
        authorizations_per_minute: int = 60,
        max_registrations_per_hour: int = 1000,
        remember_consent: bool = True,
        client_metadata_documents: bool = True,
        clock: Callable[[], float] = time.time,
        upstream_transport: Any = None,
        cimd_transport: Any = None,
        cimd_resolver: Any = None,
        cimd_allow_private: bool = False,
    ) -> None:
        self.issuer = check_url(issuer, "Facade issuer").rstrip("/")
        self.resource = check_url(resource, "Facade resource (the MCP endpoint URL)")
        if not isinstance(upstream, Upstream):
            raise TypeError("upstream must be a rondo.auth.facade.Upstream")
        self.keys = Keys(secret, signing_key)
        self.key_checked_at = float("-inf")  # when access_tokens.py last read the store's key
        self.store: Store = MemoryStore(clock=clock) if store is None else store
        if not isinstance(self.store, Store):
            raise TypeError("store must implement rondo.auth.facade.store.Store")
        self.scopes_supported = check_scopes(scopes_supported, "Facade scopes_supported")
        for name, value in (("access_ttl", access_ttl), ("refresh_ttl", refresh_ttl),
                            ("code_ttl", code_ttl), ("flow_ttl", flow_ttl),
                            ("consent_ttl", consent_ttl), ("client_ttl", client_ttl)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive number of seconds")
        if code_ttl > 600:
            raise ValueError("code_ttl must be at most 600 seconds (RFC 6749 §4.1.2)")
        if not 0 <= grace <= 300:
            raise ValueError("grace must be between 0 and 300 seconds")
        if not 0 <= verify_ttl <= access_ttl:
            raise ValueError("verify_ttl must be between 0 and access_ttl")
        self.access_ttl, self.refresh_ttl, self.code_ttl = access_ttl, refresh_ttl, code_ttl
        self.flow_ttl, self.consent_ttl, self.client_ttl = flow_ttl, consent_ttl, client_ttl
        self.grace = float(grace)
        self.verify_ttl = float(verify_ttl)
        self.registrations_per_minute = registrations_per_minute
        self.authorizations_per_minute = authorizations_per_minute
        self.max_registrations_per_hour = max_registrations_per_hour
        self.remember_consent = remember_consent
        self.clock = clock
        self.cimd: Any = None
        if client_metadata_documents:
            from .cimd import CimdFetcher, system_resolver

            self.cimd = CimdFetcher(transport=cimd_transport, resolver=cimd_resolver or system_resolver,
                                    allow_private=cimd_allow_private)
        self.upstream = upstream
        self.upstream_http = UpstreamClient(upstream, upstream_transport, clock)
        self.discovered = upstream.issuer is None  # upstream_tokens.py discovers on first need
        self.refreshing: dict[str, asyncio.Lock] = {}  # grant -> its provider refresh, in process
        parts = urlsplit(self.issuer)
        self.secure = parts.scheme == "https"
        self.cookie_prefix = "__Host-rondo-" if self.secure else "rondo-"
        base = parts.path.rstrip("/")
        self.endpoint = {name: base + "/" + name for name in
                         ("authorize", "consent", "callback", "token", "register", "revoke", "jwks")}
        self.callback_url = self.issuer + "/callback"
        wk = ("/.well-known/oauth-authorization-server" + base,
              "/.well-known/openid-configuration" + base)
        self._routes: dict[str, Callable[[Scope, Receive, Send], Any]] = {
            self.endpoint["authorize"]: partial(authorize.authorize, self),
            self.endpoint["consent"]: partial(authorize.consent, self),
            self.endpoint["callback"]: partial(callback.callback, self),
            self.endpoint["token"]: partial(token_endpoint.token, self),
            self.endpoint["register"]: partial(registration.register, self),
            self.endpoint["revoke"]: partial(revocation.revoke, self),
            self.endpoint["jwks"]: partial(discovery.jwks_endpoint, self),
            wk[0]: partial(discovery.metadata_endpoint, self),
            wk[1]: partial(discovery.metadata_endpoint, self),
        }
        self.paths = frozenset(self._routes)
        self._cors = frozenset({self.endpoint["token"], self.endpoint["register"],
                                self.endpoint["revoke"], self.endpoint["jwks"], *wk})

    # -- wiring ------------------------------------------------------------------------------

    def resource_server(self, **options: Any) -> Any:
        """The `rondo.auth.ResourceServer` for `Server(auth=...)`: it accepts the facade's
        tokens (checked here, no HTTP) and its HTTP app serves the facade's paths."""
        from ..config import ResourceServer

        options.setdefault("scopes_supported", self.scopes_supported)
        options.setdefault("clock", self.clock)
        rs = ResourceServer(resource=self.resource, issuer=self.issuer,
                            verifier=FacadeVerifier(self), endpoints=self, **options)
        return rs

    def use_redis(self, url: str) -> None:
        """`rondo run --redis URL`: a facade left on the default memory store moves to that
        Redis (the fleet's), so every worker shares registrations, codes and tokens."""
        if isinstance(self.store, MemoryStore):
            from .redis_store import RedisStore

            self.store = RedisStore(url)

    def started(self, environ: Any = os.environ) -> None:
        """Called when an HTTP app is built around the facade: a fleet member (`rondo run
        --workers N`, `RONDO_FLEET=1`) must share its store with the other workers."""
        fleet = str(environ.get(ENV_FLEET, "")).strip().lower() in ("1", "true", "yes", "on")
        if fleet and not getattr(self.store, "shared", False):
            raise FleetMisconfigured(
                "rondo: refusing to start the authorization facade as one of several workers "
                "on a memory store: a code or refresh token issued by one worker would be "
                "unknown to the others. Use rondo run --redis URL (or RedisStore(url)) or FileStore.")

    def metadata(self) -> dict[str, Any]:
        """The RFC 8414 authorization server metadata."""
        return discovery.metadata(self)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        handler = self._routes.get(scope.get("path", ""))
        if handler is None:
            await send_json(send, 404, {"error": "not_found"})
            return
        if scope.get("path") in self._cors:
            # Browser-based clients call these from their own origin (no cookies are involved).
            if scope["method"] == "OPTIONS":
                await send({"type": "http.response.start", "status": 204, "headers": PREFLIGHT})
                await send({"type": "http.response.body", "body": b""})
                return
            send = with_cors(send)
        if asyncio.current_task() is None:
            # rondo's server runs a request eagerly, without a task, until it first waits; the
            # store's clients (redis' timeouts) need one, so wait once and run as a task.
            await asyncio.sleep(0)
        try:
            await handler(scope, receive, send)
        except BadForm:
            await send_json(send, 400, {"error": "invalid_request",
                                        "error_description": "The request could not be read"},
                            NO_STORE)
        except StoreFull:
            log.error("rondo.auth.facade: the store is full; refusing")
            await send_unavailable(send)
        except (OSError, ConnectionError, TimeoutError) as exc:  # the store is away (Redis down)
            log.error("rondo.auth.facade: the store failed (%s); refusing", type(exc).__name__)
            await send_unavailable(send)
        except Exception as exc:
            if type(exc).__module__.split(".")[0] != "redis":
                raise
            log.error("rondo.auth.facade: the store failed (%s); refusing", type(exc).__name__)
            await send_unavailable(send)

    # -- what tools and applications call ------------------------------------------------------

    async def client(self, client_id: str) -> Client | None:
        """A registered client, or one identified by its metadata document's URL; None if unknown."""
        return await registration.find_client(self, client_id)

    async def revoke_grant(self, grant_id: str) -> None:
        """Revoke a family: its refresh tokens stop working at once, its access tokens within
        `verify_ttl` (their verification asks the store). The provider's tokens it kept are
        dropped, and revoked at the provider too when it has a revocation endpoint (its own
        refresh token, never one of the facade's; best effort: a failure is logged)."""
        await revocation.revoke_grant(self, grant_id)

    async def upstream_tokens(self, principal: Any) -> UpstreamTokens:
        """The provider's tokens for the user behind `principal` (a facade-verified
        `ctx.auth`), refreshed at the provider first when the access token is about to expire.
        Use them for the provider's own APIs; never send the client's token anywhere."""
        return await kept.upstream_tokens(self, principal)

    async def upstream_token(self, principal: Any) -> str:
        """The provider's access token for this request's user (see `upstream_tokens`)."""
        return (await self.upstream_tokens(principal)).access_token

    async def _signer(self, kid: str | None = None) -> Signer:
        return await access_tokens.current_signer(self, kid)

    async def _decode_access(self, token: str, *, verify_exp: bool = True) -> dict[str, Any] | None:
        return await access_tokens.decode_access(self, token, verify_exp=verify_exp)

    def __repr__(self) -> str:
        return f"Facade(issuer={self.issuer!r}, upstream={self.upstream!r})"
