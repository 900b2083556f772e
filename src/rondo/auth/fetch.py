"""Bounded HTTP for talking to an authorization server: a time limit for the whole exchange,
a size limit on the body, JSON objects only. Failures are `VerifierUnavailable`, never a hang."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx
import msgspec

from ..wire.inflate import ACCEPT_ENCODING, InflateError, TooLarge, read_body
from .errors import VerifierUnavailable
from .loop_client import LoopClient

DEFAULT_TIMEOUT = 5.0
DEFAULT_MAX_BYTES = 256 * 1024


class Fetcher:
    """One pooled client per verifier; `timeout` bounds each exchange end to end."""

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if not isinstance(timeout, int | float) or timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds")
        if not isinstance(max_bytes, int) or max_bytes < 1024:
            raise ValueError("max_bytes must be an integer of at least 1024")
        self.timeout = float(timeout)
        self.max_bytes = max_bytes
        self._pool = LoopClient(self.timeout)

    def _http(self) -> httpx.AsyncClient:
        return self._pool.get()

    async def json(
        self,
        url: str,
        *,
        form: Mapping[str, str] | None = None,
        auth: tuple[str, str] | None = None,
    ) -> dict[str, Any]:
        """GET (or POST `form`) `url` and return its JSON object body."""
        where = _where(url)
        try:
            return await asyncio.wait_for(self._exchange(url, form, auth, where), self.timeout)
        except TimeoutError:
            raise VerifierUnavailable(f"{where} did not answer within {self.timeout:g}s") from None

    async def _exchange(self, url: str, form: Mapping[str, str] | None,
                        auth: tuple[str, str] | None, where: str) -> dict[str, Any]:
        client = self._http()
        method = "GET" if form is None else "POST"
        headers = {"accept": "application/json", "accept-encoding": ACCEPT_ENCODING}
        try:
            async with client.stream(method, url, data=form, auth=auth, headers=headers) as response:
                if response.status_code != 200:
                    raise VerifierUnavailable(f"{where} answered HTTP {response.status_code}")
                # Decoded within the cap as it inflates: a compressed bomb is refused early.
                raw = await read_body(response, self.max_bytes)
        except TooLarge:
            raise VerifierUnavailable(f"{where} sent more than {self.max_bytes} bytes") from None
        except InflateError as exc:
            raise VerifierUnavailable(f"{where} sent an undecodable body ({exc})") from None
        except httpx.HTTPError as exc:
            raise VerifierUnavailable(f"{where} unreachable ({type(exc).__name__})") from None
        try:
            body = msgspec.json.decode(raw)
        except (msgspec.DecodeError, RecursionError):
            raise VerifierUnavailable(f"{where} sent invalid JSON") from None
        if not isinstance(body, dict):
            raise VerifierUnavailable(f"{where} sent JSON that is not an object")
        return body


def _where(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def metadata_urls(issuer: str) -> list[str]:
    """Where RFC 8414 and OpenID Connect Discovery put an issuer's metadata, in that order."""
    parts = urlsplit(issuer)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if path:
        return [
            f"{origin}/.well-known/oauth-authorization-server{path}",
            f"{origin}/.well-known/openid-configuration{path}",
            f"{origin}{path}/.well-known/openid-configuration",
        ]
    return [f"{origin}/.well-known/oauth-authorization-server",
            f"{origin}/.well-known/openid-configuration"]


async def as_metadata(fetcher: Fetcher, issuer: str) -> dict[str, Any]:
    """The issuer's metadata; its `issuer` must be identical to the one configured (RFC 8414 §3.3)."""
    last: VerifierUnavailable | None = None
    for url in metadata_urls(issuer):
        try:
            doc = await fetcher.json(url)
        except VerifierUnavailable as exc:
            last = exc
            continue
        if doc.get("issuer") != issuer:
            raise VerifierUnavailable(f"metadata at {_where(url)} names another issuer")
        return doc
    raise last or VerifierUnavailable("no authorization server metadata")
