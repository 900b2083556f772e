"""Bounded HTTP exchanges with authorization servers and metadata endpoints.

Every exchange has a total deadline (a server that drips bytes cannot hold the client) and a
body cap (a huge metadata document cannot fill memory); redirects are not followed, so a
metadata URL cannot bounce the client somewhere else.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import msgspec

from rondo.client.auth.errors import AuthError
from rondo.wire.inflate import ACCEPT_ENCODING, InflateError, TooLarge, read_body

MAX_BODY = 256 * 1024
USER_AGENT = "rondo-oauth"


@dataclass(frozen=True)
class Limits:
    timeout: float = 10.0  # seconds for one whole exchange, connect to last byte
    max_body: int = MAX_BODY


@dataclass
class Reply:
    status: int
    headers: httpx.Headers
    body: bytes
    url: str

    def json(self) -> Any:
        """The body as JSON, or None when it is not JSON."""
        try:
            return msgspec.json.decode(self.body) if self.body.strip() else None
        except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
            return None


def new_http(limits: Limits, transport: httpx.AsyncBaseTransport | None = None) -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=httpx.Timeout(limits.timeout), follow_redirects=False,
                             headers={"User-Agent": USER_AGENT}, transport=transport)


async def exchange(
    http: httpx.AsyncClient,
    method: str,
    url: str,
    limits: Limits,
    *,
    data: Mapping[str, str] | None = None,
    json: Any = None,
    headers: Mapping[str, str] | None = None,
    error: type[AuthError] = AuthError,
) -> Reply:
    """One request, read to the end within `limits`; network failures raise `error`."""
    what = f"{method} {_safe_url(url)}"
    try:
        async with asyncio.timeout(limits.timeout):
            kwargs: dict[str, Any] = {"headers": {"Accept": "application/json",
                                                  "Accept-Encoding": ACCEPT_ENCODING, **(headers or {})}}
            if data is not None:
                kwargs["data"] = dict(data)
            if json is not None:
                kwargs["content"] = msgspec.json.encode(json)
                kwargs["headers"]["Content-Type"] = "application/json"
            async with http.stream(method, url, **kwargs) as response:
                # Decoded within the cap as it inflates: a compressed bomb is refused early.
                body = await read_body(response, limits.max_body)
                return Reply(response.status_code, response.headers, body, url)
    except TooLarge:
        raise error(f"{what}: response larger than {limits.max_body} bytes") from None
    except InflateError as exc:
        raise error(f"{what}: undecodable response ({exc})") from None
    except TimeoutError:
        raise error(f"{what}: no complete answer within {limits.timeout:g} s") from None
    except httpx.HTTPError as exc:
        raise error(f"{what} failed: {type(exc).__name__}") from None


def _safe_url(url: str) -> str:
    """The URL without its query (authorization URLs carry state and challenges)."""
    return url.split("?", 1)[0]
