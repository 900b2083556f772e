"""The part every grant shares: an `httpx.Auth` that adds `Authorization: Bearer` to each
request, and on 401 (or 403 `insufficient_scope`) discovers who guards the server, gets a
token (refresh first when it can, else the grant of the subclass), and resends, a bounded
number of times.

Hooked into the client's HTTP transport as the httpx client's `auth`, so every request
(POST, GET stream, DELETE) goes through it and the transport needs no OAuth knowledge.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Generator, Sequence
from dataclasses import dataclass

import httpx

from rondo.client.auth.challenge import Challenge, bearer_challenge
from rondo.client.auth.discovery import (
    ResourceMetadata,
    ServerMetadata,
    fetch_resource_metadata,
    fetch_server_metadata,
)
from rondo.client.auth.dpop import DpopKey, server_supports
from rondo.client.auth.errors import AuthError, InsufficientScope, TokenError
from rondo.client.auth.fetch import Limits, new_http
from rondo.client.auth.store import MemoryTokenStore, TokenStore, server_key, token_key
from rondo.client.auth.tokens import ClientIdentity, Token, client_auth, request_token

log = logging.getLogger("rondo.client.auth")


@dataclass(frozen=True)
class Guard:
    """Who protects one server URL: its resource metadata and the chosen authorization server."""

    server_url: str
    resource: ResourceMetadata
    metadata: ServerMetadata

    @property
    def issuer(self) -> str:
        return self.metadata.issuer


def server_url_of(url: httpx.URL) -> str:
    return f"{url.scheme}://{url.netloc.decode('ascii')}{url.path}"


def union(*scope_lists: Sequence[str] | None) -> list[str]:
    return list(dict.fromkeys(s for scopes in scope_lists for s in (scopes or ())))


class BearerAuth(httpx.Auth):
    """Base of `OAuth` and `ClientCredentials`; subclasses implement `_obtain`."""

    def __init__(
        self,
        *,
        scopes: Sequence[str] | None = None,
        store: TokenStore | None = None,
        timeout: float = 10.0,
        max_attempts: int = 3,
        refresh_margin: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
        dpop: bool = False,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.scopes = list(scopes or [])
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self.limits = Limits(timeout=timeout)
        self.max_attempts = max_attempts
        self.refresh_margin = refresh_margin
        self.transport = transport  # for the OAuth exchanges (a proxy, custom TLS, tests)
        # DPoP-bound tokens where the authorization server offers them (the key is made now,
        # so a missing PyJWT fails here rather than at the first request).
        self._dpop = DpopKey() if dpop else None
        self._locks: dict[int, asyncio.Lock] = {}  # one per event loop (a lock binds to its loop)
        self._current: dict[str, Token] = {}  # server URL -> token, so requests skip the store
        self._metadata: dict[str, ServerMetadata] = {}
        self._requested: dict[str, list[str]] = {}  # token key -> scopes last asked for

    @property
    def _lock(self) -> asyncio.Lock:
        loop = id(asyncio.get_running_loop())
        lock = self._locks.get(loop)
        if lock is None:
            self._locks = {loop: (lock := asyncio.Lock())}  # forget locks of finished loops
        return lock

    # -- httpx.Auth ------------------------------------------------------------------------

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        raise RuntimeError("rondo OAuth works with httpx.AsyncClient only")
        yield request  # pragma: no cover

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        server = server_url_of(request.url)
        sent = await self._usable_token(server)
        if sent is not None:
            self._present(request, sent)
        response = yield request
        attempts = 0
        refreshed = False
        nonce_retries = 0
        schemes = ("bearer", "dpop") if self._dpop is not None else ("bearer",)
        while True:
            fresh_nonce = self._dpop is not None and self._dpop.remember_nonce(str(request.url), response.headers)
            if response.status_code not in (401, 403):
                return
            challenge = bearer_challenge(response.headers.get_list("www-authenticate"), schemes)
            if (sent is not None and fresh_nonce and nonce_retries < 2 and challenge is not None
                    and challenge.get("error") == "use_dpop_nonce"):
                nonce_retries += 1  # RFC 9449 §9: the same token, a proof with the server's nonce
                self._present(request, sent)
                response = yield request
                continue
            if response.status_code == 403 and (challenge is None or challenge.get("error") != "insufficient_scope"):
                return  # a plain 403 is the server's answer, not a sign-in problem
            if request.method == "DELETE":
                return  # ending a session is not worth a sign-in
            if attempts >= self.max_attempts:
                if response.status_code == 403:
                    raise InsufficientScope(
                        f"{server} still answers 403 insufficient_scope after {attempts} "
                        f"authorization(s) (asked for {' '.join(challenge.scopes or []) if challenge else ''!r})")
                raise AuthError(f"{server} still answers 401 after {attempts} authorization(s)")
            attempts += 1
            sent, refreshed = await self._recover(server, response.status_code, challenge, sent, refreshed)
            self._present(request, sent)
            response = yield request

    def _present(self, request: httpx.Request, token: Token) -> None:
        if token.token_type == "DPoP" and self._dpop is not None:
            request.headers["Authorization"] = f"DPoP {token.access_token}"
            request.headers["DPoP"] = self._dpop.proof(request.method, str(request.url), token.access_token)
        else:
            request.headers["Authorization"] = f"Bearer {token.access_token}"

    def _holds_key(self, token: Token) -> bool:
        """False for a DPoP-bound token whose key is not this object's."""
        return token.token_type != "DPoP" or (self._dpop is not None and token.jkt == self._dpop.thumbprint)

    def _dpop_for(self, metadata: ServerMetadata) -> DpopKey | None:
        return self._dpop if self._dpop is not None and server_supports(metadata.raw) else None

    # -- what subclasses provide -----------------------------------------------------------

    async def _obtain(self, http: httpx.AsyncClient, guard: Guard, scopes: list[str]) -> Token:
        raise NotImplementedError

    async def _identity(self, http: httpx.AsyncClient, metadata: ServerMetadata, *, register: bool) -> ClientIdentity | None:
        raise NotImplementedError

    def _client_assertion(self, identity: ClientIdentity, metadata: ServerMetadata) -> str | None:
        return None

    # -- the recovery path -----------------------------------------------------------------

    async def _recover(
        self, server: str, status: int, challenge: Challenge | None, sent: Token | None, refreshed: bool
    ) -> tuple[Token, bool]:
        async with self._lock, new_http(self.limits, self.transport) as http:
            guard = await self._discover(http, server, challenge)
            key = token_key(guard.issuer, guard.resource.resource)
            current = Token.from_json(await self.store.get(key) or {})
            fresh = current is not None and not current.expires_within(0) and self._holds_key(current) and (
                sent is None or current.access_token != sent.access_token)
            if fresh and current is not None:
                # Another request signed in while this one waited for the lock.
                wanted = set(challenge.scopes or []) if challenge else set()
                if status == 401 or wanted <= set(current.scopes):
                    return current, refreshed
            if status == 401:
                if current is not None and current.refresh_token and not refreshed:
                    try:
                        token = await self._refresh(http, guard, current)
                    except TokenError as exc:
                        log.info("refresh at %s failed (%s); signing in again", guard.issuer, exc)
                    else:
                        await self._save(guard, token)
                        return token, True
                await self.store.delete(key)
                self._current.pop(server, None)
                scopes = union(challenge.scopes if challenge and challenge.scopes else guard.resource.scopes_supported,
                               self.scopes)
            else:
                scopes = union(self._requested.get(key), current.scopes if current else None,
                               challenge.scopes if challenge else None, self.scopes)
            self._requested[key] = scopes
            log.info("signing in to %s at %s (scopes: %s)", server, guard.issuer, " ".join(scopes) or "-")
            token = await self._obtain(http, guard, scopes)
            await self._save(guard, token)
            return token, refreshed

    async def _discover(self, http: httpx.AsyncClient, server: str, challenge: Challenge | None) -> Guard:
        hint = challenge.get("resource_metadata") if challenge else None
        resource = await fetch_resource_metadata(http, server, hint, self.limits)
        issuer = resource.authorization_servers[0]
        metadata = await self._server_metadata(http, issuer)
        return Guard(server, resource, metadata)

    async def _server_metadata(self, http: httpx.AsyncClient, issuer: str) -> ServerMetadata:
        metadata = self._metadata.get(issuer)
        if metadata is None:
            metadata = await fetch_server_metadata(http, issuer, self.limits)
            self._metadata[issuer] = metadata
        return metadata

    async def _save(self, guard: Guard, token: Token) -> None:
        self._current[guard.server_url] = token
        await self.store.set(token_key(guard.issuer, guard.resource.resource), token.to_json())
        await self.store.set(server_key(guard.server_url),
                             {"issuer": guard.issuer, "resource": guard.resource.resource})

    # -- tokens before a request -----------------------------------------------------------

    async def _usable_token(self, server: str) -> Token | None:
        cached = self._current.get(server)
        if cached is not None and not cached.expires_within(self.refresh_margin):
            return cached  # the common case: no store access at all
        where = await self.store.get(server_key(server))
        if not where or not isinstance(where.get("issuer"), str) or not isinstance(where.get("resource"), str):
            return None
        key = token_key(where["issuer"], where["resource"])
        token = Token.from_json(await self.store.get(key) or {})
        if token is not None and not self._holds_key(token):
            return None  # bound to a key this object does not hold (another process's)
        if token is None or not token.expires_within(self.refresh_margin):
            if token is not None:
                self._current[server] = token
            return token
        if not token.refresh_token:
            return None if token.expires_within(0) else token
        async with self._lock:
            latest = Token.from_json(await self.store.get(key) or {})
            if latest is not None and not latest.expires_within(self.refresh_margin):
                self._current[server] = latest
                return latest  # refreshed by someone else meanwhile
            try:
                async with new_http(self.limits, self.transport) as http:
                    metadata = await self._server_metadata(http, where["issuer"])
                    fresh = await self._refresh_with(http, metadata, where["resource"], token)
            except AuthError as exc:
                log.info("refresh before expiry at %s failed (%s)", where["issuer"], exc)
                return None if token.expires_within(0) else token
            await self.store.set(key, fresh.to_json())
            self._current[server] = fresh
            return fresh

    async def _refresh(self, http: httpx.AsyncClient, guard: Guard, token: Token) -> Token:
        return await self._refresh_with(http, guard.metadata, guard.resource.resource, token)

    async def _refresh_with(self, http: httpx.AsyncClient, metadata: ServerMetadata, resource: str, token: Token) -> Token:
        assert token.refresh_token is not None
        identity = await self._identity(http, metadata, register=False)
        if identity is None:
            raise TokenError(f"no client identity at {metadata.issuer} to refresh with")
        form = {"grant_type": "refresh_token", "refresh_token": token.refresh_token, "resource": resource}
        if token.scope:  # the same scope again (RFC 6749 §6), never more
            form["scope"] = token.scope
        headers = client_auth(identity, form, self._client_assertion(identity, metadata))
        return await request_token(http, metadata.token_endpoint, form, headers, self.limits,
                                   issuer=metadata.issuer, resource=resource, requested_scope=token.scope,
                                   previous_refresh=token.refresh_token, dpop=self._dpop_for(metadata))
