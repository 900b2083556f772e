"""`Facade`: an OAuth 2.1 authorization server for MCP clients, signing users in upstream.

    facade = Facade(issuer="https://mcp.example.com", resource="https://mcp.example.com/mcp",
                    upstream=Upstream(...), secret=FACADE_SECRET, store=RedisStore(url))
    server = rondo.Server("files", auth=facade.resource_server(scopes_supported=["mcp"]))

The server's HTTP app then answers the facade's paths beside `/mcp` (see `paths`). The flow:
`/register` (RFC 7591) -> `/authorize` (PKCE S256, `resource`) -> the facade's consent page
(once per user and client) -> the provider's sign-in -> `/callback` -> the client's redirect
with the facade's code -> `/token` (the facade's signed JWT and a rotating refresh token).
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import hashlib
import html
import logging
import os
import re
import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

import msgspec

from ..scopes import OFFLINE, check_scopes
from ..urls import check_url, same_resource
from . import records as rec
from .clients import Client, check_registration
from .errors import OAuthError
from .keys import Keys, Signer, digest, generate_signing_key, pem_of, random_token, unb64
from .store import MemoryStore, Store, StoreFull
from .upstream import Identity, Upstream, UpstreamError, UpstreamTokens, userinfo_identity
from .upstream_http import UpstreamClient, UpstreamRefused
from .web import (
    NO_STORE,
    BadForm,
    Receive,
    Scope,
    Send,
    body_of,
    client_ip,
    cookie,
    cookies_of,
    header,
    params_of,
    query_of,
    send_json,
    send_page,
    send_redirect,
    with_query,
)

log = logging.getLogger("rondo.auth.facade")

_VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")
_CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")
_OPAQUE = re.compile(r"[A-Za-z0-9_-]{16,128}")  # our codes, states, refresh tokens
_GRANT_CODE = "authorization_code"
_KEY_RECORD = "signing-key:v1"
_KEY_TTL = 100 * 365 * 86400.0  # kept as long as the store keeps anything
# RSA keys this process made, by secret (not the secret): a second facade with the same secret
# in one process (tests, several apps) offers the same key instead of making another.
_GENERATED: dict[str, Any] = {}
_GRANT_REFRESH = "refresh_token"
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
        self._key_checked = float("-inf")
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
        self._cimd: Any = None
        if client_metadata_documents:
            from .cimd import CimdFetcher, system_resolver

            self._cimd = CimdFetcher(transport=cimd_transport, resolver=cimd_resolver or system_resolver,
                                     allow_private=cimd_allow_private)
        self.upstream = upstream
        self._upstream_http = UpstreamClient(upstream, upstream_transport, clock)
        self._discovered = upstream.issuer is None
        self._refreshing: dict[str, asyncio.Lock] = {}
        parts = urlsplit(self.issuer)
        self.secure = parts.scheme == "https"
        self._cookie = "__Host-rondo-" if self.secure else "rondo-"
        base = parts.path.rstrip("/")
        self.endpoint = {name: base + "/" + name for name in
                         ("authorize", "consent", "callback", "token", "register", "revoke", "jwks")}
        self.callback_url = self.issuer + "/callback"
        wk = ("/.well-known/oauth-authorization-server" + base,
              "/.well-known/openid-configuration" + base)
        self._routes: dict[str, Callable[[Scope, Receive, Send], Any]] = {
            self.endpoint["authorize"]: self._authorize,
            self.endpoint["consent"]: self._consent,
            self.endpoint["callback"]: self._callback,
            self.endpoint["token"]: self._token,
            self.endpoint["register"]: self._register,
            self.endpoint["revoke"]: self._revoke,
            self.endpoint["jwks"]: self._jwks,
            wk[0]: self._metadata,
            wk[1]: self._metadata,
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
        doc: dict[str, Any] = {
            "issuer": self.issuer,
            "authorization_endpoint": self.issuer + "/authorize",
            "token_endpoint": self.issuer + "/token",
            "registration_endpoint": self.issuer + "/register",
            "revocation_endpoint": self.issuer + "/revoke",
            "jwks_uri": self.issuer + "/jwks",
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": [_GRANT_CODE, _GRANT_REFRESH],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "revocation_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "authorization_response_iss_parameter_supported": True,
            "scopes_supported": [*self.scopes_supported, OFFLINE],
        }
        if self._cimd is not None:
            doc["client_id_metadata_document_supported"] = True
        return doc

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        handler = self._routes.get(scope.get("path", ""))
        if handler is None:
            await send_json(send, 404, {"error": "not_found"})
            return
        if scope.get("path") in self._cors:
            # Browser-based clients call these from their own origin (no cookies are involved).
            if scope["method"] == "OPTIONS":
                await send({"type": "http.response.start", "status": 204, "headers": _PREFLIGHT})
                await send({"type": "http.response.body", "body": b""})
                return
            send = _with_cors(send)
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
            await _unavailable(send)
        except (OSError, ConnectionError, TimeoutError) as exc:  # the store is away (Redis down)
            log.error("rondo.auth.facade: the store failed (%s); refusing", type(exc).__name__)
            await _unavailable(send)
        except Exception as exc:
            if type(exc).__module__.split(".")[0] != "redis":
                raise
            log.error("rondo.auth.facade: the store failed (%s); refusing", type(exc).__name__)
            await _unavailable(send)

    # -- metadata and keys ---------------------------------------------------------------------

    async def _metadata(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] not in ("GET", "HEAD"):
            await send_json(send, 405, {"error": "invalid_request"}, [(b"allow", b"GET")])
            return
        await send_json(send, 200, self.metadata(), [(b"cache-control", b"public, max-age=300"),
                                                     (b"access-control-allow-origin", b"*")])

    async def _jwks(self, scope: Scope, receive: Receive, send: Send) -> None:
        signer = await self._signer()  # a store failure is a 503 (see __call__)
        await send_json(send, 200, {"keys": [signer.jwk]},
                        [(b"cache-control", b"public, max-age=300"), (b"access-control-allow-origin", b"*")])

    # -- clients -------------------------------------------------------------------------------

    async def client(self, client_id: str) -> Client | None:
        if self._cimd is not None and isinstance(client_id, str) and client_id.startswith("https://"):
            return await self._metadata_client(client_id)
        if not isinstance(client_id, str) or not _OPAQUE.fullmatch(client_id):
            return None
        found: Client | None = rec.decode(await self.store.get("client:" + client_id), Client)
        return found

    async def _metadata_client(self, url: str) -> Client | None:
        """A client identified by its metadata document's URL (fetched, then kept)."""
        from .cimd import is_cimd

        if not is_cimd(url):
            return None
        key = digest(url)
        kept: Client | None = rec.decode(await self.store.get("cimd:" + key), Client)
        if kept is not None:
            return kept
        if await self.store.get("cimd-bad:" + key) is not None:
            return None  # failed recently: not fetched again for a minute
        try:
            fetched: tuple[Client, int] = await self._cimd.fetch(url)
        except OAuthError as exc:
            log.info("rondo.auth.facade: client metadata document refused: %s", exc.description)
            await self.store.put("cimd-bad:" + key, b"1", 60)
            return None
        found, ttl = fetched
        await self.store.put("cimd:" + key, rec.encode(found), ttl)
        return found

    async def _register(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            await send_json(send, 405, {"error": "invalid_request"}, [(b"allow", b"POST")])
            return
        ip = client_ip(scope)
        if (await self.store.count("reg-ip:" + digest(ip), 60) > self.registrations_per_minute
                or await self.store.count("reg-all", 3600) > self.max_registrations_per_hour):
            log.warning("rondo.auth.facade: registration refused (flood bound reached)")
            await send_json(send, 429, {"error": "temporarily_unavailable",
                                        "error_description": "Too many registrations; try later"},
                            [(b"retry-after", b"60"), *NO_STORE])
            return
        raw = await body_of(receive)
        try:
            doc = msgspec.json.decode(raw)
            meta = check_registration(doc)
        except (msgspec.DecodeError, RecursionError):
            await send_json(send, 400, {"error": "invalid_client_metadata",
                                        "error_description": "The registration is not JSON"}, NO_STORE)
            return
        except OAuthError as exc:
            await send_json(send, exc.status, exc.body(), NO_STORE)
            return
        client_id = random_token(24)
        secret = None if meta["token_endpoint_auth_method"] == "none" else random_token(32)
        now = int(self.clock())
        record = Client(client_id=client_id, redirect_uris=meta["redirect_uris"],
                        auth_method=meta["token_endpoint_auth_method"],
                        secret_digest=digest(secret) if secret else None,
                        name=meta.get("client_name"), issued_at=now, grant_types=meta["grant_types"])
        await self.store.put("client:" + client_id, rec.encode(record), self.client_ttl)
        answer = {"client_id": client_id, "client_id_issued_at": now, **meta}
        if secret is not None:
            answer["client_secret"] = secret
            answer["client_secret_expires_at"] = 0
        await send_json(send, 201, answer, NO_STORE)

    # -- /authorize ----------------------------------------------------------------------------

    async def _authorize(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] not in ("GET", "POST"):
            await send_json(send, 405, {"error": "invalid_request"}, [(b"allow", b"GET, POST")])
            return
        q = query_of(scope) if scope["method"] == "GET" else params_of(
            (await body_of(receive)).decode("ascii", "replace"))
        client = await self.client(q.get("client_id", ""))
        if client is None:
            await self._error_page(send, "This application is not registered here.")
            return
        redirect = q.get("redirect_uri")
        if redirect is None and len(client.redirect_uris) == 1:
            redirect = client.redirect_uris[0]
        if redirect is None or redirect not in client.redirect_uris:  # exact string match
            await self._error_page(send, "The redirect URI is not one this application registered.")
            return
        state = q.get("state")

        async def refuse(error: str, text: str) -> None:
            await send_redirect(send, with_query(redirect, {"error": error, "error_description": text,
                                                             "state": state, "iss": self.issuer}))

        if q.get("response_type") != "code":
            await refuse("unsupported_response_type", "Only response_type=code is supported")
            return
        if q.get("code_challenge_method") != "S256" or not _CHALLENGE.fullmatch(q.get("code_challenge", "")):
            await refuse("invalid_request", "PKCE with code_challenge_method=S256 is required")
            return
        resource = q.get("resource", self.resource)
        if not same_resource(resource, self.resource):
            await refuse("invalid_target", "This server issues tokens for its own resource only")
            return
        try:
            scope_text = self._granted_scope(q.get("scope"))
        except OAuthError as exc:
            await refuse(exc.error, exc.description)
            return
        if await self.store.count("authz-ip:" + digest(client_ip(scope)), 60) > self.authorizations_per_minute:
            await refuse("temporarily_unavailable", "Too many sign-ins from this address; try later")
            return
        pending = rec.Pending(client_id=client.client_id, redirect_uri=redirect,
                              challenge=q["code_challenge"], resource=self.resource,
                              scope=scope_text, state=state, csrf_nonce=self._csrf_nonce(scope))
        # Remembered consent skips the page only for a navigation the user started (the browser
        # says `Sec-Fetch-Site: none`); a redirect from another site, or a client that does not
        # say, sees the page again, so no site can ride an earlier approval silently.
        remembered = self._remembered_user(scope) if header(scope, b"sec-fetch-site") == "none" else None
        if remembered is not None and await self.store.get(
                f"consent:{digest(remembered)}:{client.client_id}") is not None:
            await self._go_upstream(send, pending)  # this user approved this client before
            return
        await self._consent_page(send, client, pending)

    def _csrf_nonce(self, scope: Scope) -> str:
        """The browser's CSRF nonce: kept while its cookie lives, so a consent page loaded twice
        (a reload, a prefetch) does not spoil the form of the first."""
        there = cookies_of(scope).get(self._cookie + "csrf", "")
        return there if _OPAQUE.fullmatch(there) else random_token(16)

    def _granted_scope(self, asked: str | None) -> str:
        wanted = asked.split() if asked else list(self.scopes_supported)
        allowed = {*self.scopes_supported, OFFLINE}
        if not set(wanted) <= allowed:
            raise OAuthError("invalid_scope", "A requested scope is not offered by this server")
        return " ".join(dict.fromkeys(wanted))

    def _remembered_user(self, scope: Scope) -> str | None:
        if not self.remember_consent:
            return None
        value = cookies_of(scope).get(self._cookie + "user", "")
        who, _, tag = value.rpartition(".")
        if not who or not tag:
            return None
        try:
            subject = base64.urlsafe_b64decode(who + "=" * (-len(who) % 4)).decode()
        except (ValueError, UnicodeDecodeError):
            return None
        return subject if self.keys.mac_ok("user|" + subject, tag) else None

    async def _consent_page(self, send: Send, client: Client, pending: rec.Pending) -> None:
        request_id = random_token(24)
        await self.store.put("pending:" + request_id, rec.encode(pending), self.flow_ttl)
        csrf = self.keys.mac(f"csrf|{request_id}|{pending.csrf_nonce}")
        e = html.escape
        name = client.name or "An unnamed application"
        scopes = " ".join(self.upstream.scopes)
        body = (
            f"<p><strong>{e(name)}</strong> (client id <code>{e(client.client_id)}</code>) asks to "
            f"use this server as you.</p>"
            f"<p>It will get access to: <code>{e(pending.scope or '(no scopes)')}</code>.</p>"
            f"<p>You will sign in at <strong>{e(self.upstream.name)}</strong>, which will be asked "
            f"for <code>{e(scopes)}</code>.</p>"
            f"<p>Afterwards you are sent to <code>{e(pending.redirect_uri)}</code>. Approve only "
            "if you started this sign-in and trust that address.</p>"
            f'<form method="post" action="{e(self.endpoint["consent"])}">'
            f'<input type="hidden" name="request" value="{e(request_id)}">'
            f'<input type="hidden" name="csrf" value="{e(csrf)}">'
            '<button name="decision" value="approve">Approve</button> '
            '<button name="decision" value="deny">Deny</button></form>')
        await send_page(send, 200, "Allow access?", body, [
            cookie(self._cookie + "csrf", pending.csrf_nonce, secure=self.secure,
                   max_age=self.flow_ttl)])

    async def _consent(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            await send_json(send, 405, {"error": "invalid_request"}, [(b"allow", b"POST")])
            return
        form = params_of((await body_of(receive)).decode("ascii", "replace"))
        request_id = form.get("request", "")
        if not _OPAQUE.fullmatch(request_id):
            await self._error_page(send, "This approval form is not valid.")
            return
        pending = rec.decode(await self.store.take("pending:" + request_id), rec.Pending)
        nonce = cookies_of(scope).get(self._cookie + "csrf", "")
        if pending is None or not nonce or nonce != pending.csrf_nonce or not self.keys.mac_ok(
                f"csrf|{request_id}|{nonce}", form.get("csrf", "")):
            await self._error_page(send, "This approval form has expired or was not shown to "
                                         "this browser. Start the sign-in again.")
            return
        if form.get("decision") != "approve":
            await send_redirect(send, with_query(pending.redirect_uri, {
                "error": "access_denied", "error_description": "The user denied access",
                "state": pending.state, "iss": self.issuer}))
            return
        await self._go_upstream(send, pending)

    async def _go_upstream(self, send: Send, pending: rec.Pending) -> None:
        """Consent given: store the flow under a fresh `state`, bind it to this browser, and
        send the user to the provider."""
        try:
            up = await self._endpoints()
        except UpstreamError:
            await send_redirect(send, with_query(pending.redirect_uri, {
                "error": "temporarily_unavailable", "error_description":
                "The identity provider could not be reached", "state": pending.state,
                "iss": self.issuer}))
            return
        state = random_token(32)
        verifier = random_token(48)
        nonce = random_token(24) if "openid" in up.scopes else None
        flow = rec.Flow(client_id=pending.client_id, redirect_uri=pending.redirect_uri,
                        challenge=pending.challenge, resource=pending.resource, scope=pending.scope,
                        state=pending.state, upstream_verifier=verifier, nonce=nonce)
        await self.store.put("flow:" + state, rec.encode(flow), self.flow_ttl)
        params: dict[str, str | None] = {
            "response_type": "code", "client_id": up.client_id, "redirect_uri": self.callback_url,
            "scope": " ".join(up.scopes), "state": state, **up.extra_authorize_params}
        if up.pkce:
            params["code_challenge"] = _s256(verifier)
            params["code_challenge_method"] = "S256"
        if nonce is not None:
            params["nonce"] = nonce
        assert up.authorize_url is not None
        await send_redirect(send, with_query(up.authorize_url, params), [
            cookie(self._cookie + "flow", self.keys.mac("flow|" + state), secure=self.secure,
                   max_age=self.flow_ttl)])

    async def _endpoints(self) -> Upstream:
        if not self._discovered:
            try:
                doc = await self._upstream_http.discover()
            except UpstreamError as exc:
                log.warning("rondo.auth.facade: provider discovery failed: %s", exc.reason)
                raise
            self.upstream = self.upstream.with_endpoints(doc)
            self._upstream_http.upstream = self.upstream
            self._discovered = True
        return self.upstream

    async def _error_page(self, send: Send, text: str, status: int = 400) -> None:
        await send_page(send, status, "Sign-in failed", f"<p>{html.escape(text)}</p>")

    # -- /callback: back from the provider ---------------------------------------------------

    async def _callback(self, scope: Scope, receive: Receive, send: Send) -> None:
        q = query_of(scope)
        state = q.get("state", "")
        if not _OPAQUE.fullmatch(state):
            await self._error_page(send, "This sign-in is unknown or has expired.")
            return
        flow = rec.decode(await self.store.take("flow:" + state), rec.Flow)
        bound = cookies_of(scope).get(self._cookie + "flow", "")
        if flow is None or not self.keys.mac_ok("flow|" + state, bound):
            # Unknown, used, expired, or finished in another browser than the one that consented.
            await self._error_page(send, "This sign-in is unknown, has expired, or was started "
                                         "in another browser.")
            return

        async def refuse(error: str, text: str) -> None:
            await send_redirect(send, with_query(flow.redirect_uri, {
                "error": error, "error_description": text, "state": flow.state, "iss": self.issuer}))

        if "error" in q or "code" not in q:
            upstream_error = q.get("error")
            error = upstream_error if upstream_error in ("access_denied", "temporarily_unavailable") else "access_denied"
            await refuse(error, "The identity provider did not sign you in")
            return
        form = {"grant_type": _GRANT_CODE, "code": q["code"], "redirect_uri": self.callback_url}
        try:
            up = await self._endpoints()  # this worker may not have discovered them yet
            if up.pkce:
                form["code_verifier"] = flow.upstream_verifier
            tokens = await self._upstream_http.token(form)
            if flow.nonce is not None:
                tokens = dataclasses.replace(tokens, nonce=flow.nonce)
            reader = up.identity or userinfo_identity
            identity = await reader(self._upstream_http, tokens, up)
            if not isinstance(identity, Identity) or not isinstance(identity.subject, str) or not identity.subject:
                raise UpstreamError("the identity reader returned no subject")
        except UpstreamError as exc:
            log.warning("rondo.auth.facade: sign-in at the provider failed: %s", exc.reason)
            await refuse("temporarily_unavailable", "The identity provider could not be reached")
            return
        now = self.clock()
        grant_id = random_token(24)
        grant = rec.Grant(subject=identity.subject, client_id=flow.client_id, scope=flow.scope,
                          resource=flow.resource, identity=_plain(identity.claims), created=now)
        await self.store.put("grant:" + grant_id, rec.encode(grant), self.refresh_ttl)
        await self._keep_upstream(grant_id, tokens)
        code = random_token(32)
        stored = rec.Code(client_id=flow.client_id, redirect_uri=flow.redirect_uri,
                          challenge=flow.challenge, resource=flow.resource, scope=flow.scope,
                          grant=grant_id, expires_at=now + self.code_ttl)
        await self.store.put("code:" + digest(code), rec.encode(stored), self.code_ttl)
        extra = []
        if self.remember_consent:
            await self.store.put(f"consent:{digest(identity.subject)}:{flow.client_id}", b"1",
                                 self.consent_ttl)
            who = base64.urlsafe_b64encode(identity.subject.encode()).rstrip(b"=").decode()
            extra.append(cookie(self._cookie + "user", f"{who}.{self.keys.mac('user|' + identity.subject)}",
                                secure=self.secure, max_age=self.consent_ttl))
        await send_redirect(send, with_query(flow.redirect_uri, {
            "code": code, "state": flow.state, "iss": self.issuer}), extra)

    async def _keep_upstream(self, grant_id: str, tokens: UpstreamTokens) -> None:
        stored = rec.StoredTokens(access_token=tokens.access_token, token_type=tokens.token_type,
                                  refresh_token=tokens.refresh_token, expires_at=tokens.expires_at,
                                  id_token=tokens.id_token, scope=tokens.scope)
        sealed = self.keys.seal(rec.encode(stored), "upstream|" + grant_id)
        await self.store.put("upstream:" + grant_id, sealed, self.refresh_ttl)

    # -- /token --------------------------------------------------------------------------------

    async def _token(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            await send_json(send, 405, {"error": "invalid_request"}, [(b"allow", b"POST")])
            return
        try:
            form = params_of((await body_of(receive)).decode("ascii", "replace"))
            client = await self._client_auth(scope, form)
            grant_type = form.get("grant_type")
            if grant_type == _GRANT_CODE:
                answer = await self._redeem_code(client, form)
            elif grant_type == _GRANT_REFRESH:
                answer = await self._refresh(client, form)
            else:
                raise OAuthError("unsupported_grant_type", "Supported: authorization_code, refresh_token")
        except OAuthError as exc:
            extra = list(NO_STORE)
            if exc.status == 401:
                extra.append((b"www-authenticate", b'Basic realm="token"'))
            await send_json(send, exc.status, exc.body(), extra)
            return
        await send_json(send, 200, answer, NO_STORE)

    async def _client_auth(self, scope: Scope, form: dict[str, str]) -> Client:
        """The client making a token or revocation request, authenticated as it registered."""
        basic = header(scope, b"authorization")
        client_id = form.get("client_id")
        secret = form.get("client_secret")
        method = "none"
        if basic is not None and basic[:6].lower() == "basic ":
            try:
                from urllib.parse import unquote

                pair = base64.b64decode(basic[6:].strip(), validate=True).decode()
                user, _, password = pair.partition(":")
                user, password = unquote(user), unquote(password)
            except (ValueError, UnicodeDecodeError):
                raise OAuthError("invalid_client", "Client authentication failed", 401) from None
            if client_id is not None and client_id != user:
                raise OAuthError("invalid_request", "Two different client ids")
            client_id, secret, method = user, password, "client_secret_basic"
        elif secret is not None:
            method = "client_secret_post"
        client = await self.client(client_id or "")
        if client is None:
            raise OAuthError("invalid_client", "Client authentication failed", 401)
        if client.secret_digest is None:
            if method != "none":
                raise OAuthError("invalid_client", "Client authentication failed", 401)
            return client
        import hmac

        if secret is None or not hmac.compare_digest(digest(secret), client.secret_digest):
            raise OAuthError("invalid_client", "Client authentication failed", 401)
        return client

    async def _redeem_code(self, client: Client, form: dict[str, str]) -> dict[str, Any]:
        code = form.get("code", "")
        if not _OPAQUE.fullmatch(code):
            raise OAuthError("invalid_grant", "The authorization code is invalid")
        key = digest(code)
        stored = rec.decode(await self.store.take("code:" + key), rec.Code)
        if stored is None:
            used = await self.store.get("code-used:" + key)
            if used is not None:  # a replayed code: what it produced is revoked (RFC 6749 §4.1.2)
                await self.revoke_grant(used.decode())
                log.warning("rondo.auth.facade: an authorization code was replayed; its grant is revoked")
            raise OAuthError("invalid_grant", "The authorization code is invalid, used or expired")
        await self.store.put("code-used:" + key, stored.grant.encode(), 600)
        if stored.expires_at <= self.clock():
            raise OAuthError("invalid_grant", "The authorization code is invalid, used or expired")
        if stored.client_id != client.client_id:
            raise OAuthError("invalid_grant", "The authorization code was issued to another client")
        if form.get("redirect_uri", stored.redirect_uri) != stored.redirect_uri:
            raise OAuthError("invalid_grant", "The redirect URI does not match the authorization request")
        verifier = form.get("code_verifier", "")
        import hmac

        if not _VERIFIER.fullmatch(verifier) or not hmac.compare_digest(_s256(verifier), stored.challenge):
            raise OAuthError("invalid_grant", "The PKCE code verifier does not match")
        resource = form.get("resource")
        if resource is not None and not same_resource(resource, stored.resource):
            raise OAuthError("invalid_target", "This server issues tokens for its own resource only")
        grant = rec.decode(await self.store.get("grant:" + stored.grant), rec.Grant)
        if grant is None:
            raise OAuthError("invalid_grant", "The sign-in has expired")
        refresh = await self._new_refresh(stored.grant, client.client_id) \
            if _GRANT_REFRESH in client.grant_types else None
        return await self._token_answer(stored.grant, grant, grant.scope, refresh)

    async def _new_refresh(self, grant_id: str, client_id: str) -> str:
        token = random_token(32)
        record = rec.Refresh(grant=grant_id, client_id=client_id,
                             expires_at=self.clock() + self.refresh_ttl)
        await self.store.put("refresh:" + digest(token), rec.encode(record), self.refresh_ttl)
        return token

    async def _refresh(self, client: Client, form: dict[str, str]) -> dict[str, Any]:
        token = form.get("refresh_token", "")
        if not _OPAQUE.fullmatch(token):
            raise OAuthError("invalid_grant", "The refresh token is invalid")
        key = digest(token)
        record = rec.decode(await self.store.get("refresh:" + key), rec.Refresh)
        if record is None or record.expires_at <= self.clock():
            raise OAuthError("invalid_grant", "The refresh token is invalid or expired")
        if record.client_id != client.client_id:
            raise OAuthError("invalid_grant", "The refresh token was issued to another client")
        if await self.store.get("revoked:" + record.grant) is not None:
            raise OAuthError("invalid_grant", "The refresh token has been revoked")
        grant = rec.decode(await self.store.get("grant:" + record.grant), rec.Grant)
        if grant is None:
            raise OAuthError("invalid_grant", "The sign-in has expired")
        resource = form.get("resource")
        if resource is not None and not same_resource(resource, grant.resource):
            raise OAuthError("invalid_target", "This server issues tokens for its own resource only")
        scope_text = grant.scope
        asked = form.get("scope")
        if asked is not None:
            if not set(asked.split()) <= set(grant.scope.split()):
                raise OAuthError("invalid_scope", "A refresh cannot widen the granted scopes")
            scope_text = " ".join(dict.fromkeys(asked.split()))
        now = self.clock()
        rotated = await self.store.get("rotated:" + key)
        if rotated is None:
            # Write the successor first, then claim the rotation: of racing refreshes exactly
            # one claim wins, and every loser answers with the winner's successor.
            successor = await self._new_refresh(record.grant, client.client_id)
            claim = rec.Rotation(successor=self.keys.seal(successor.encode(), "rotated|" + key).hex(),
                                 at=now)
            rotated = await self.store.add("rotated:" + key, rec.encode(claim), self.refresh_ttl)
            if rotated is None:
                await self._extend(record.grant, grant)  # the family lives as long as its newest token
                return await self._token_answer(record.grant, grant, scope_text, successor)
            await self.store.delete("refresh:" + digest(successor))
        won = rec.decode(rotated, rec.Rotation)
        if won is not None and now - won.at <= self.grace:
            opened = self.keys.open(bytes.fromhex(won.successor), "rotated|" + key)
            if opened is not None:
                return await self._token_answer(record.grant, grant, scope_text, opened.decode())
        # Presented again after the grace window: someone holds a copy. Revoke the family.
        await self.revoke_grant(record.grant)
        log.warning("rondo.auth.facade: a rotated refresh token was reused after the grace "
                    "window; its family is revoked")
        raise OAuthError("invalid_grant", "The refresh token was already used")

    async def _extend(self, grant_id: str, grant: rec.Grant) -> None:
        await self.store.put("grant:" + grant_id, rec.encode(grant), self.refresh_ttl)
        sealed = await self.store.get("upstream:" + grant_id)
        if sealed is not None:
            await self.store.put("upstream:" + grant_id, sealed, self.refresh_ttl)

    async def _token_answer(self, grant_id: str, grant: rec.Grant, scope_text: str,
                      refresh: str | None) -> dict[str, Any]:
        signer = await self._signer()
        now = int(self.clock())
        claims: dict[str, Any] = {
            "iss": self.issuer, "sub": grant.subject, "aud": grant.resource,
            "client_id": grant.client_id, "iat": now, "exp": now + self.access_ttl,
            "jti": random_token(16), "gid": grant_id}
        resource_scopes = " ".join(s for s in scope_text.split() if s != OFFLINE)
        if resource_scopes:
            claims["scope"] = resource_scopes
        access = signer.sign(claims)
        answer: dict[str, Any] = {"access_token": access, "token_type": "Bearer",
                                  "expires_in": self.access_ttl}
        if resource_scopes:
            answer["scope"] = resource_scopes
        if refresh is not None:
            answer["refresh_token"] = refresh
        return answer

    # -- revocation ----------------------------------------------------------------------------

    async def revoke_grant(self, grant_id: str) -> None:
        """Revoke a family: its refresh tokens stop working at once, its access tokens within
        `verify_ttl` (their verification asks the store). The provider's tokens it kept are
        dropped, and revoked at the provider too when it has a revocation endpoint (its own
        refresh token, never one of the facade's; best effort: a failure is logged)."""
        await self.store.put("revoked:" + grant_id, b"1", self.refresh_ttl)
        try:
            stored = await self._load_upstream(grant_id)
        except UpstreamError:
            return  # nothing kept (already dropped)
        await self.store.delete("upstream:" + grant_id)
        try:
            up = await self._endpoints()
            if up.revocation_url is None:
                return
            token, hint = ((stored.refresh_token, "refresh_token") if stored.refresh_token
                           else (stored.access_token, "access_token"))
            status = await self._upstream_http.revoke(token, hint)
            if status != 200:
                log.warning("rondo.auth.facade: the provider answered a revocation with HTTP %d", status)
        except UpstreamError as exc:
            log.warning("rondo.auth.facade: revoking at the provider failed: %s", exc.reason)

    async def _revoke(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            await send_json(send, 405, {"error": "invalid_request"}, [(b"allow", b"POST")])
            return
        try:
            form = params_of((await body_of(receive)).decode("ascii", "replace"))
            client = await self._client_auth(scope, form)
        except OAuthError as exc:
            await send_json(send, exc.status, exc.body(), list(NO_STORE))
            return
        token = form.get("token", "")
        grant_id: str | None = None
        if _OPAQUE.fullmatch(token):
            record = rec.decode(await self.store.get("refresh:" + digest(token)), rec.Refresh)
            if record is not None and record.client_id == client.client_id:
                grant_id = record.grant
        elif token.count(".") == 2 and len(token) < 8192:
            claims = await self._decode_access(token, verify_exp=False)
            if claims is not None and claims.get("client_id") == client.client_id:
                grant_id = claims.get("gid")
        if isinstance(grant_id, str):
            await self.revoke_grant(grant_id)
        await send_json(send, 200, {}, NO_STORE)  # RFC 7009 §2.2: 200 whatever the token was

    # -- access tokens -------------------------------------------------------------------------

    async def _signer(self, kid: str | None = None) -> Signer:
        """The key that signs access tokens: the given `signing_key`, or the one this facade's
        workers share, kept in the store sealed with the secret (the first worker to need it
        makes it; `add` lets one win). A token naming another `kid` (the store lost the key and
        another worker made a new one) reads the store again, at most every 10 s."""
        signer = self.keys.signer
        if signer is not None and (self.keys.given or kid is None or kid == signer.kid
                                   or self.clock() < self._key_checked + 10):
            return signer
        self._key_checked = self.clock()
        sealed = await self.store.get(_KEY_RECORD)
        if sealed is None:
            key = signer.key if signer is not None else _GENERATED.get(self.keys.secret_id)
            if key is None:
                key = _GENERATED.setdefault(self.keys.secret_id, generate_signing_key())
            mine = self.keys.seal(pem_of(key), _KEY_RECORD)
            sealed = await self.store.add(_KEY_RECORD, mine, _KEY_TTL) or mine
        pem = self.keys.open(sealed, _KEY_RECORD)
        if pem is None:
            raise RuntimeError("the facade's signing key in the store is sealed with another "
                               "secret: every worker sharing a store needs the same secret")
        if signer is None or pem != pem_of(signer.key):
            signer = Signer(pem)
            self.keys.signer = signer
        return signer

    async def _decode_access(self, token: str, *, verify_exp: bool = True) -> dict[str, Any] | None:
        """The claims of one of our access tokens (signature, `iss`, `aud` = the resource,
        `exp`, `iat`, `sub`, `gid` present), or None. No PyJWT on this path: one algorithm, one
        key, the claims we issue."""
        signer = self.keys.signer or await self._signer()
        claims = signer.verify(token)
        if claims is None and not self.keys.given:
            head = token.split(".", 1)[0]
            try:
                kid = msgspec.json.decode(unb64(head)).get("kid") if len(head) < 512 else None
            except (ValueError, AttributeError, msgspec.DecodeError):
                kid = None
            if isinstance(kid, str) and kid != signer.kid:
                fresh = await self._signer(kid)
                if fresh is not signer:
                    claims = fresh.verify(token)
        if claims is None or claims.get("iss") != self.issuer:
            return None
        aud = claims.get("aud")
        if aud != self.resource and not (isinstance(aud, list) and self.resource in aud):
            return None
        exp = claims.get("exp")
        if not isinstance(exp, int) or isinstance(exp, bool) or not isinstance(claims.get("iat"), int) \
                or not isinstance(claims.get("sub"), str) or "gid" not in claims:
            return None
        if verify_exp and exp <= self.clock() - 5:
            return None  # expired, on the facade's clock (the one that issued it)
        return claims

    async def upstream_tokens(self, principal: Any) -> UpstreamTokens:
        """The provider's tokens for the user behind `principal` (a facade-verified
        `ctx.auth`), refreshed at the provider first when the access token is about to expire.
        Use them for the provider's own APIs; never send the client's token anywhere."""
        grant_id = principal.claims.get("gid") if principal is not None else None
        if not isinstance(grant_id, str):
            raise UpstreamError("this request was not authorized by the facade")
        stored = await self._load_upstream(grant_id)
        if _fresh(stored, self.clock()) or stored.refresh_token is None:
            return _public(stored)
        lock = self._refreshing.setdefault(grant_id, asyncio.Lock())
        try:
            async with lock:  # one refresh per grant in this process ...
                stored = await self._load_upstream(grant_id)  # another call may have refreshed it
                if _fresh(stored, self.clock()) or stored.refresh_token is None:
                    return _public(stored)
                return await self._refresh_upstream(grant_id)
        finally:
            if not lock.locked():
                self._refreshing.pop(grant_id, None)

    async def _refresh_upstream(self, grant_id: str) -> UpstreamTokens:
        """... and one across the workers sharing the store: a claim on the grant (held at most
        the provider's timeout); the others wait for the new tokens instead of spending the
        provider's refresh token a second time (a rotating provider would refuse it)."""
        claim = "upstream-refresh:" + grant_id
        hold = self.upstream.timeout + 5
        loop = asyncio.get_running_loop()
        give_up = loop.time() + hold
        while await self.store.add(claim, b"1", hold) is not None:
            await asyncio.sleep(0.05)
            stored = await self._load_upstream(grant_id)
            if _fresh(stored, self.clock()) or stored.refresh_token is None:
                return _public(stored)
            if loop.time() > give_up:
                break  # the holder died: refresh anyway
        try:
            stored = await self._load_upstream(grant_id)
            if _fresh(stored, self.clock()) or stored.refresh_token is None:
                return _public(stored)
            await self._endpoints()
            try:
                tokens = await self._upstream_http.token({"grant_type": _GRANT_REFRESH,
                                                          "refresh_token": stored.refresh_token})
            except UpstreamRefused as exc:
                log.warning("rondo.auth.facade: the provider refused a refresh (%s)", exc.code)
                raise
            if tokens.refresh_token is None:  # the provider kept the refresh token
                tokens = UpstreamTokens(**{**_fields(tokens), "refresh_token": stored.refresh_token})
            await self._keep_upstream(grant_id, tokens)
            return tokens
        finally:
            await self.store.delete(claim)

    async def upstream_token(self, principal: Any) -> str:
        """The provider's access token for this request's user (see `upstream_tokens`)."""
        return (await self.upstream_tokens(principal)).access_token

    async def _load_upstream(self, grant_id: str) -> rec.StoredTokens:
        sealed = await self.store.get("upstream:" + grant_id)
        opened = None if sealed is None else self.keys.open(sealed, "upstream|" + grant_id)
        stored = rec.decode(opened, rec.StoredTokens)
        if stored is None:
            raise UpstreamError("no provider tokens are kept for this sign-in")
        return stored  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"Facade(issuer={self.issuer!r}, upstream={self.upstream!r})"


class FacadeVerifier:
    """The facade's access tokens, checked in process: the signature with the facade's key,
    `iss`, `aud` = the resource, `exp`; then the store says whether the family was revoked.
    `ctx.auth.claims["upstream"]` holds the provider's identity claims."""

    def __init__(self, facade: Facade) -> None:
        self.facade = facade
        self.cache_ttl = facade.verify_ttl

    async def verify(self, token: str) -> Any:
        from ..errors import InvalidToken
        from ..principal import Principal

        facade = self.facade
        try:
            claims = await facade._decode_access(token)
        except Exception as exc:  # the store is away (Redis down) while reading the key: 503
            _unless_store_failed(exc)
            raise
        if claims is None:
            raise InvalidToken("The access token is invalid", reason="not a valid facade token")
        grant_id = claims["gid"]
        if not isinstance(grant_id, str) or not _OPAQUE.fullmatch(grant_id):
            raise InvalidToken("The access token is invalid", reason="bad gid")
        try:
            many = getattr(facade.store, "get_many", None)
            if many is not None:  # one round trip (an MGET on Redis)
                revoked, raw_grant = await many(["revoked:" + grant_id, "grant:" + grant_id])
            else:
                revoked = await facade.store.get("revoked:" + grant_id)
                raw_grant = await facade.store.get("grant:" + grant_id)
        except Exception as exc:  # the store is away (Redis down): 503, not a crash
            _unless_store_failed(exc)
            raise
        if revoked is not None:
            raise InvalidToken("The access token has been revoked", reason="family revoked")
        grant = rec.decode(raw_grant, rec.Grant)
        if grant is None:
            raise InvalidToken("The access token's sign-in has ended", reason="no grant")
        return Principal.from_claims({**claims, "upstream": grant.identity})


_PREFLIGHT = [(b"access-control-allow-origin", b"*"),
              (b"access-control-allow-methods", b"GET, POST, OPTIONS"),
              (b"access-control-allow-headers", b"authorization, content-type"),
              (b"access-control-max-age", b"600"), (b"content-length", b"0")]


def _unless_store_failed(exc: Exception) -> None:
    """A store failure (a socket error, Redis's own errors) becomes `VerifierUnavailable`;
    anything else is left to propagate."""
    from ..errors import VerifierUnavailable

    if isinstance(exc, OSError | ConnectionError | TimeoutError) or \
            type(exc).__module__.split(".")[0] == "redis":
        raise VerifierUnavailable(f"the facade's store failed ({type(exc).__name__})") from None


def _with_cors(send: Send) -> Send:
    async def sending(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", ()))
            if not any(k == b"access-control-allow-origin" for k, _ in headers):
                headers.append((b"access-control-allow-origin", b"*"))
            message = {**message, "headers": headers}
        await send(message)

    return sending


async def _unavailable(send: Send) -> None:
    await send_json(send, 503, {"error": "temporarily_unavailable", "error_description": "Try again later"},
                    [(b"retry-after", b"5"), *NO_STORE])


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def _fresh(stored: rec.StoredTokens, now: float) -> bool:
    return stored.expires_at is None or stored.expires_at - 30 > now


def _public(stored: rec.StoredTokens) -> UpstreamTokens:
    return UpstreamTokens(access_token=stored.access_token, token_type=stored.token_type,
                          refresh_token=stored.refresh_token, expires_at=stored.expires_at,
                          id_token=stored.id_token, scope=stored.scope)


def _fields(tokens: UpstreamTokens) -> dict[str, Any]:
    return {"access_token": tokens.access_token, "token_type": tokens.token_type,
            "refresh_token": tokens.refresh_token, "expires_at": tokens.expires_at,
            "id_token": tokens.id_token, "scope": tokens.scope, "raw": tokens.raw}


def _plain(claims: Any) -> dict[str, Any]:
    """Identity claims as plain JSON, bounded (a provider's userinfo can be large)."""
    try:
        data = msgspec.json.decode(msgspec.json.encode(dict(claims)))
    except (TypeError, msgspec.EncodeError, msgspec.DecodeError):
        return {}
    if len(msgspec.json.encode(data)) > 16 * 1024:
        return {k: v for k, v in data.items() if isinstance(v, str | int | float | bool) and len(str(v)) < 512}
    return data  # type: ignore[no-any-return]
