"""`TokenExchange`: RFC 8693 token exchange on the client side, for calls a server makes upstream.

A tool (or `rondo.proxy`) that calls an upstream API or MCP server must not pass on the token
its client sent (the spec forbids token passthrough). It asks a security token service (STS)
to exchange the caller's verified token for one whose audience is the upstream:

    sts = TokenExchange(token_endpoint="https://sso.example.com/token",
                        client_id="gateway", client_secret="...")
    headers = await sts.headers(ctx, resource="https://api.example.com/")

Exchanged tokens are cached per (caller, the caller's scopes, audience, resource, scope) until
`refresh_margin` seconds before they expire, in a bounded LRU; concurrent calls for the same
key share one request to the STS. Failures are `ExchangeRefused` (the STS said no: an OAuth
error) or `ExchangeUnavailable` (down, slow, garbage), within `timeout`; no message, log line
or repr holds a token or the client secret.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any
from urllib.parse import quote

import httpx
import msgspec

from ..wire.inflate import ACCEPT_ENCODING, InflateError, TooLarge, read_body
from .errors import VerifierUnavailable
from .loop_client import LoopClient
from .principal import CALLER, Principal, bearer_of
from .urls import check_url

log = logging.getLogger("rondo.auth")

GRANT_TYPE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token"
AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")
_MAX_TOKEN = 16 * 1024
_MAX_DESCRIPTION = 200


class TokenExchangeError(Exception):
    """The exchange did not give a token. `error` is the STS's OAuth error code, if it sent one.
    The message is written to be shown (a tool that raises it answers `isError` with it): it
    never holds a token or secret."""

    public = True

    def __init__(self, message: str, *, error: str | None = None) -> None:
        super().__init__(message)
        self.error = error


class ExchangeRefused(TokenExchangeError):
    """The STS answered with an OAuth error (`invalid_grant`, `invalid_target`,
    `unauthorized_client`, ...): asking again will not help."""


class ExchangeUnavailable(TokenExchangeError):
    """The STS could not be asked or did not answer usefully (unreachable, slower than
    `timeout`, an HTTP 5xx, a body that is not a token response)."""


class ExchangedToken:
    """A token the STS issued for one upstream. `access_token` is the credential itself; the
    repr never shows it."""

    __slots__ = ("access_token", "token_type", "expires_at", "scope", "issued_token_type")

    def __init__(self, access_token: str, token_type: str, expires_at: float,
                 scope: str | None, issued_token_type: str | None) -> None:
        self.access_token = access_token
        self.token_type = token_type
        self.expires_at = expires_at
        self.scope = scope
        self.issued_token_type = issued_token_type

    @property
    def authorization(self) -> str:
        """The `Authorization` header value: `Bearer <token>`."""
        return f"Bearer {self.access_token}"

    def __repr__(self) -> str:
        return (f"ExchangedToken(token_type={self.token_type!r}, expires_at={self.expires_at!r}, "
                f"scope={self.scope!r})")


_Key = tuple[str, frozenset[str], str | None, str | None, str | None]


class TokenExchange:
    """Exchange the caller's token for upstream ones at an RFC 8693 STS.

    - `token_endpoint`, or `issuer` (its metadata, RFC 8414 / OpenID discovery, gives the
      endpoint on first use): https, http only on loopback.
    - `client_id` / `client_secret`: this server's own client at the STS, sent as
      `client_secret_basic` (default), `client_secret_post`, or not at all (`"none"`).
    - `timeout`: seconds for one exchange, end to end (connect, send, read).
    - `cache_size`: how many exchanged tokens are kept (LRU); 0 turns the cache off.
    - `refresh_margin`: a cached token is exchanged again this many seconds before it expires
      (at most half its lifetime); `default_ttl`: its lifetime when the STS sends no
      `expires_in`.
    - `max_bytes`: the largest STS answer read; `clock` and `transport` (an httpx transport)
      are for tests.
    """

    def __init__(
        self,
        *,
        client_id: str,
        client_secret: str | None = None,
        token_endpoint: str | None = None,
        issuer: str | None = None,
        auth_method: str = "client_secret_basic",
        timeout: float = 5.0,
        cache_size: int = 1000,
        refresh_margin: float = 30.0,
        default_ttl: float = 60.0,
        max_bytes: int = 64 * 1024,
        clock: Callable[[], float] = time.time,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if (token_endpoint is None) == (issuer is None):
            raise ValueError("TokenExchange needs exactly one of token_endpoint= and issuer=")
        self.token_endpoint = (None if token_endpoint is None
                               else check_url(token_endpoint, "TokenExchange token_endpoint"))
        self.issuer = None if issuer is None else check_url(issuer, "TokenExchange issuer")
        if not isinstance(client_id, str) or not client_id:
            raise ValueError("TokenExchange needs client_id (this server's client at the STS)")
        if auth_method not in AUTH_METHODS:
            raise ValueError(f"auth_method must be one of {', '.join(AUTH_METHODS)}")
        if auth_method == "none":
            if client_secret is not None:
                raise ValueError("auth_method='none' sends no client_secret: do not give one")
        elif not isinstance(client_secret, str) or not client_secret:
            raise ValueError(f"auth_method={auth_method!r} needs client_secret")
        for name, value in (("timeout", timeout), ("default_ttl", default_ttl)):
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"{name} must be a positive number of seconds")
        if isinstance(refresh_margin, bool) or not isinstance(refresh_margin, int | float) \
                or refresh_margin < 0:
            raise ValueError("refresh_margin must be a non-negative number of seconds")
        if isinstance(cache_size, bool) or not isinstance(cache_size, int) or cache_size < 0:
            raise ValueError("cache_size must be a non-negative integer")
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1024:
            raise ValueError("max_bytes must be an integer of at least 1024")
        self.client_id = client_id
        self._secret = client_secret
        self.auth_method = auth_method
        self.timeout = float(timeout)
        self.cache_size = cache_size
        self.refresh_margin = float(refresh_margin)
        self.default_ttl = float(default_ttl)
        self.max_bytes = max_bytes
        self._clock = clock
        # key -> (token, refresh at); the key holds no token (the caller's binding and scopes).
        self._cache: OrderedDict[_Key, tuple[ExchangedToken, float]] = OrderedDict()
        self._inflight: dict[_Key, asyncio.Future[ExchangedToken]] = {}
        self._pool = LoopClient(self.timeout, transport)
        self.exchanges = 0  # requests sent to the STS (a figure for tests and metrics)

    # -- the public calls -----------------------------------------------------------------------

    async def token(self, caller: Any, *, audience: str | None = None,
                    resource: str | None = None, scope: str | None = None) -> ExchangedToken:
        """A token for the upstream named by `resource` (an absolute URI, RFC 8707) and/or
        `audience` (the STS's name for it), acting for `caller` (a `rondo.Context` or a
        `Principal` verified by `rondo.auth`). Cached; one exchange in flight per key."""
        principal = _principal_of(caller)
        if audience is None and resource is None:
            raise ValueError("name the upstream: audience= and/or resource=")
        if resource is not None:
            check_url(resource, "resource")
        key: _Key = (principal.binding, principal.scopes, audience, resource, scope)
        cached = self._cache.get(key)
        if cached is not None:
            if self._clock() < cached[1]:
                self._cache.move_to_end(key)
                return cached[0]
            del self._cache[key]
        pending = self._inflight.get(key)
        if pending is None or pending.get_loop() is not asyncio.get_running_loop():
            subject = bearer_of(principal)
            if subject is None:
                raise TokenExchangeError("no bearer token to exchange: the caller was not "
                                         "authenticated by rondo.auth over HTTP")
            pending = asyncio.ensure_future(self._exchange(key, subject, audience, resource, scope))
            self._inflight[key] = pending
            pending.add_done_callback(lambda done: self._settled(key, done))
        # Shielded: one waiter's cancellation does not cancel the exchange the others share.
        return await asyncio.shield(pending)

    async def headers(self, caller: Any, *, audience: str | None = None,
                      resource: str | None = None, scope: str | None = None) -> dict[str, str]:
        """`{"Authorization": "Bearer <exchanged token>"}` for the upstream."""
        got = await self.token(caller, audience=audience, resource=resource, scope=scope)
        return {"Authorization": got.authorization}

    def forget(self, caller: Any, *, audience: str | None = None, resource: str | None = None,
               scope: str | None = None) -> None:
        """Drop the cached token for this caller and upstream (it was refused upstream, say)."""
        principal = _principal_of(caller)
        self._cache.pop((principal.binding, principal.scopes, audience, resource, scope), None)

    def upstream_auth(self, *, audience: str | None = None, resource: str | None = None,
                      scope: str | None = None, otherwise: httpx.Auth | None = None) -> httpx.Auth:
        """An `httpx.Auth` for `rondo.proxy(..., upstream_auth=...)`: a request relayed for a
        caller carries that caller's exchanged token; any other (the proxy's own listing at
        start-up) goes through `otherwise` (`rondo.client.ClientCredentials`, say), or bare."""
        if audience is None and resource is None:
            raise ValueError("name the upstream: audience= and/or resource=")
        if resource is not None:
            check_url(resource, "resource")
        return ExchangeAuth(self, audience=audience, resource=resource, scope=scope,
                            otherwise=otherwise)

    async def aclose(self) -> None:
        """Close the pooled HTTP client (a new one is made on next use)."""
        await self._pool.aclose()

    def __repr__(self) -> str:
        where = self.token_endpoint or self.issuer
        return f"TokenExchange(client_id={self.client_id!r}, sts={where!r})"

    # -- the exchange ---------------------------------------------------------------------------

    def _settled(self, key: _Key, done: asyncio.Future[ExchangedToken]) -> None:
        if self._inflight.get(key) is done:
            del self._inflight[key]
        if not done.cancelled():
            done.exception()  # retrieved: an exchange nobody waits for any more logs nothing

    async def _exchange(self, key: _Key, subject: str, audience: str | None,
                        resource: str | None, scope: str | None) -> ExchangedToken:
        form = {"grant_type": GRANT_TYPE, "subject_token": subject,
                "subject_token_type": ACCESS_TOKEN, "requested_token_type": ACCESS_TOKEN}
        if resource is not None:
            form["resource"] = resource
        if audience is not None:
            form["audience"] = audience
        if scope is not None:
            form["scope"] = scope
        headers = {"accept": "application/json", "accept-encoding": ACCEPT_ENCODING}
        if self.auth_method == "client_secret_basic":
            assert self._secret is not None
            pair = f"{quote(self.client_id, safe='')}:{quote(self._secret, safe='')}"
            headers["authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        else:
            form["client_id"] = self.client_id
            if self._secret is not None:
                form["client_secret"] = self._secret
        try:
            async with asyncio.timeout(self.timeout):
                endpoint = await self._endpoint()
                self.exchanges += 1
                status, body = await self._post(endpoint, form, headers)
        except TimeoutError:
            raise ExchangeUnavailable(f"the STS did not answer within {self.timeout:g}s") from None
        secrets = (subject, self._secret)
        if status != 200:
            if status in (400, 401) and isinstance(body, dict) and isinstance(body.get("error"), str):
                code = _clean(body["error"], secrets, 64)
                text = body.get("error_description")
                detail = f": {_clean(text, secrets, _MAX_DESCRIPTION)}" if isinstance(text, str) else ""
                raise ExchangeRefused(f"the STS refused the exchange ({code}){detail}", error=code)
            raise ExchangeUnavailable(f"the STS answered HTTP {status}")
        got = self._parse(body)
        lifetime = got.expires_at - self._clock()
        refresh_at = got.expires_at - min(self.refresh_margin, lifetime / 2)
        if self.cache_size:
            self._cache[key] = (got, refresh_at)
            self._cache.move_to_end(key)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return got

    def _parse(self, body: Any) -> ExchangedToken:
        if not isinstance(body, dict):
            raise ExchangeUnavailable("the STS sent a body that is not a token response")
        token, kind = body.get("access_token"), body.get("token_type")
        if not isinstance(token, str) or not token or len(token) > _MAX_TOKEN \
                or not token.isascii() or not token.isprintable() or " " in token:
            raise ExchangeUnavailable("the STS sent no usable access_token")
        if not isinstance(kind, str) or kind.lower() != "bearer":
            raise ExchangeUnavailable("the STS sent a token that is not a bearer token")
        expires_in = body.get("expires_in", self.default_ttl)
        if isinstance(expires_in, bool) or not isinstance(expires_in, int | float) or expires_in <= 0:
            raise ExchangeUnavailable("the STS sent an unusable expires_in")
        issued = body.get("issued_token_type")
        if issued is not None and issued != ACCESS_TOKEN:
            raise ExchangeUnavailable("the STS issued another token type than an access token")
        scope = body.get("scope")
        return ExchangedToken(token, "Bearer", self._clock() + float(expires_in),
                              scope if isinstance(scope, str) else None, issued)

    async def _endpoint(self) -> str:
        if self.token_endpoint is not None:
            return self.token_endpoint
        from .fetch import Fetcher, as_metadata

        assert self.issuer is not None
        try:
            meta = await as_metadata(Fetcher(timeout=self.timeout, max_bytes=self.max_bytes),
                                     self.issuer)
        except VerifierUnavailable as exc:
            raise ExchangeUnavailable(f"cannot discover the STS: {exc}") from None
        found = meta.get("token_endpoint")
        try:
            self.token_endpoint = check_url(found, "the STS's token_endpoint")
        except ValueError:
            raise ExchangeUnavailable("the STS's metadata has no usable token_endpoint") from None
        return self.token_endpoint

    async def _post(self, url: str, form: Mapping[str, str],
                    headers: Mapping[str, str]) -> tuple[int, Any]:
        try:
            async with self._pool.get().stream("POST", url, data=form, headers=headers) as response:
                raw = await read_body(response, self.max_bytes)
                status = response.status_code
        except TooLarge:
            raise ExchangeUnavailable(f"the STS sent more than {self.max_bytes} bytes") from None
        except InflateError:
            raise ExchangeUnavailable("the STS sent an undecodable body") from None
        except httpx.HTTPError as exc:
            raise ExchangeUnavailable(f"the STS is unreachable ({type(exc).__name__})") from None
        try:
            return status, msgspec.json.decode(raw)
        except (msgspec.DecodeError, RecursionError):
            if status == 200:
                raise ExchangeUnavailable("the STS sent invalid JSON") from None
            return status, None


class ExchangeAuth(httpx.Auth):
    """See `TokenExchange.upstream_auth`. The caller is the principal `rondo.proxy` relays for
    (`rondo.auth.principal.CALLER`); a 401 from the upstream drops the cached token and
    exchanges once more."""

    def __init__(self, exchange: TokenExchange, *, audience: str | None, resource: str | None,
                 scope: str | None, otherwise: httpx.Auth | None) -> None:
        self.exchange = exchange
        self.target = {"audience": audience, "resource": resource, "scope": scope}
        self.otherwise = otherwise

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        caller = CALLER.get()
        if caller is None:
            if self.otherwise is None:
                yield request
                return
            flow = self.otherwise.async_auth_flow(request)
            sent = await flow.__anext__()
            while True:
                response = yield sent
                try:
                    sent = await flow.asend(response)
                except StopAsyncIteration:
                    return
        request.headers["Authorization"] = (await self.exchange.token(caller, **self.target)).authorization
        response = yield request
        if response.status_code == 401:
            self.exchange.forget(caller, **self.target)
            request.headers["Authorization"] = (
                await self.exchange.token(caller, **self.target)).authorization
            yield request


def _principal_of(caller: Any) -> Principal:
    principal = caller if isinstance(caller, Principal) else getattr(caller, "auth", None)
    if not isinstance(principal, Principal):
        raise TokenExchangeError("no verified caller to act for (is the server protected "
                                 "by rondo.auth?)")
    return principal


def _clean(text: str, secrets: tuple[str | None, ...], limit: int) -> str:
    """An STS's words, safe to show: no secret of ours (an STS may echo the request), printable
    ASCII, bounded."""
    text = text[: limit * 2]
    for secret in secrets:
        if secret and any(secret[i:i + 16] in text for i in range(max(1, len(secret) - 15))):
            return "(withheld: it quoted the request)"
    kept = "".join(ch if ch.isascii() and ch.isprintable() else "?" for ch in text)
    return kept[:limit]
