"""Bounded HTTP to the identity provider: each exchange within `timeout`, bodies within
`max_bytes` (counted as they inflate), JSON objects only (a JSON array only where a read asks
for one: `get_json_array`). Anything else is `UpstreamError`
with a reason that never holds a token."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx
import msgspec

from ...wire.inflate import ACCEPT_ENCODING, InflateError, TooLarge, read_body
from ..loop_client import LoopClient
from .upstream import Upstream, UpstreamError, UpstreamTokens


class UpstreamClient:
    def __init__(self, upstream: Upstream, transport: httpx.AsyncBaseTransport | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.upstream = upstream
        self.clock = clock
        self.timeout = float(upstream.timeout)
        self.max_bytes = upstream.max_bytes
        self._pool = LoopClient(self.timeout, transport)

    def _http(self) -> httpx.AsyncClient:
        return self._pool.get()

    async def _call(self, method: str, url: str, *, headers: Mapping[str, str],
                    form: Mapping[str, str] | None = None,
                    auth: tuple[str, str] | None = None,
                    array: bool = False) -> tuple[int, Any]:
        where = _where(url)

        async def exchange() -> tuple[int, Any]:
            sent = {"accept": "application/json", "accept-encoding": ACCEPT_ENCODING, **headers}
            try:
                async with self._http().stream(method, url, data=form, auth=auth,
                                               headers=sent) as response:
                    raw = await read_body(response, self.max_bytes)
                    status = response.status_code
            except TooLarge:
                raise UpstreamError(f"{where} sent more than {self.max_bytes} bytes") from None
            except InflateError:
                raise UpstreamError(f"{where} sent an undecodable body") from None
            except httpx.HTTPError as exc:
                raise UpstreamError(f"{where} unreachable ({type(exc).__name__})") from None
            try:
                body = msgspec.json.decode(raw)
            except (msgspec.DecodeError, RecursionError):
                raise UpstreamError(f"{where} answered HTTP {status} without JSON") from None
            if array and status == 200:
                if not isinstance(body, list):
                    raise UpstreamError(f"{where} sent JSON that is not an array")
            elif not isinstance(body, dict):
                raise UpstreamError(f"{where} sent JSON that is not an object")
            return status, body

        try:
            return await asyncio.wait_for(exchange(), self.timeout)
        except TimeoutError:
            raise UpstreamError(f"{where} did not answer within {self.timeout:g}s") from None

    async def get_json(self, url: str, *, headers: Mapping[str, str] | None = None) -> dict[str, Any]:
        status, body = await self._call("GET", url, headers=dict(headers or {}))
        if status != 200:
            raise UpstreamError(f"{_where(url)} answered HTTP {status}")
        return dict(body)

    async def get_json_array(self, url: str, *,
                             headers: Mapping[str, str] | None = None) -> list[Any]:
        """A GET whose answer is a JSON array (an error answer may still be an object)."""
        status, body = await self._call("GET", url, headers=dict(headers or {}), array=True)
        if status != 200:
            raise UpstreamError(f"{_where(url)} answered HTTP {status}")
        return list(body)

    async def discover(self) -> dict[str, Any]:
        """The OpenID provider's discovery document; its `issuer` must be ours exactly."""
        issuer = self.upstream.issuer
        assert issuer is not None
        doc = await self.get_json(issuer.rstrip("/") + "/.well-known/openid-configuration")
        if doc.get("issuer") != issuer:
            raise UpstreamError("the discovery document names another issuer")
        return doc

    async def token(self, form: dict[str, str]) -> UpstreamTokens:
        """POST the token endpoint; a refusal (`invalid_grant`, ...) is `UpstreamRefused`."""
        up = self.upstream
        assert up.token_url is not None
        form = {**form, **up.extra_token_params}
        auth = None
        if up.token_auth == "client_secret_basic":
            assert up.client_secret is not None
            auth = (up.client_id, up.client_secret)
        else:
            form["client_id"] = up.client_id
            if up.token_auth == "client_secret_post" and up.client_secret is not None:
                form["client_secret"] = up.client_secret
        status, body = await self._call("POST", up.token_url, headers=up.token_headers, form=form,
                                        auth=auth)
        error = body.get("error")
        if status != 200 or error is not None:  # GitHub answers errors with 200
            code = error if isinstance(error, str) and error.isascii() and len(error) < 64 else "?"
            raise UpstreamRefused(code, f"{_where(up.token_url)} refused ({status} {code})")
        return tokens_of(body, self.clock())


    async def revoke(self, token: str, hint: str) -> int:
        """RFC 7009 at the provider: the HTTP status (its body, usually empty, is not read past
        the cap). Failures are `UpstreamError`."""
        up = self.upstream
        assert up.revocation_url is not None
        form = {"token": token, "token_type_hint": hint}
        auth = None
        if up.token_auth == "client_secret_basic":
            assert up.client_secret is not None
            auth = (up.client_id, up.client_secret)
        else:
            form["client_id"] = up.client_id
            if up.token_auth == "client_secret_post" and up.client_secret is not None:
                form["client_secret"] = up.client_secret
        where = _where(up.revocation_url)

        async def exchange() -> int:
            try:
                async with self._http().stream("POST", up.revocation_url or "", data=form, auth=auth,
                                               headers=dict(up.token_headers)) as response:
                    await read_body(response, self.max_bytes)
                    return response.status_code
            except (httpx.HTTPError, InflateError) as exc:
                raise UpstreamError(f"{where} unreachable ({type(exc).__name__})") from None

        try:
            return await asyncio.wait_for(exchange(), self.timeout)
        except TimeoutError:
            raise UpstreamError(f"{where} did not answer within {self.timeout:g}s") from None


class UpstreamRefused(UpstreamError):
    """The provider answered with an OAuth error (its `error` code, our reason)."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code


def tokens_of(body: Mapping[str, Any], now: float) -> UpstreamTokens:
    access = body.get("access_token")
    if not isinstance(access, str) or not access or len(access) > 16 * 1024:
        raise UpstreamError("the token response has no usable access_token")
    expires = body.get("expires_in")
    if isinstance(expires, str) and expires.isdigit():
        expires = int(expires)
    expires_at = (now + float(expires) if isinstance(expires, int | float) and not isinstance(expires, bool)
                  and 0 < expires < 10 * 365 * 86400 else None)
    refresh = body.get("refresh_token")
    id_token = body.get("id_token")
    scope = body.get("scope")
    kind = body.get("token_type")
    return UpstreamTokens(
        access_token=access,
        token_type=kind if isinstance(kind, str) and kind else "Bearer",
        refresh_token=refresh if isinstance(refresh, str) and refresh else None,
        expires_at=expires_at,
        id_token=id_token if isinstance(id_token, str) and id_token else None,
        scope=scope if isinstance(scope, str) else None,
        raw=dict(body),
    )


def _where(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"
