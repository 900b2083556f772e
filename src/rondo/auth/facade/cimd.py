"""Client ID metadata documents: a client whose `client_id` is an https URL publishes its
metadata there, and the facade fetches it instead of asking the client to register.

Fetching a URL a client names is an SSRF surface (the spec's security best practices), so:
https only, no userinfo, no redirects followed, the host must resolve to public addresses only
(loopback, private, link-local, reserved and multicast ranges refused, IPv4-mapped IPv6
included), a 5 s limit for the whole exchange, 16 KiB at most. The document's `client_id` must
equal the URL exactly; its redirect URIs are checked as a registration's are. A document is
kept for `max-age` (60 s to a day; an hour when the server says nothing).
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import httpx
import msgspec

from ...wire.inflate import ACCEPT_ENCODING, InflateError, read_body
from .clients import Client, check_redirect_uri
from .errors import OAuthError

MAX_BYTES = 16 * 1024
TIMEOUT = 5.0
_MAX_AGE = re.compile(r"max-age=(\d+)")
Resolver = Callable[[str, int], Awaitable[list[str]]]


def is_cimd(client_id: str) -> bool:
    return client_id.startswith("https://") and len(client_id) <= 2000


async def system_resolver(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


class CimdFetcher:
    def __init__(self, *, transport: httpx.AsyncBaseTransport | None = None,
                 resolver: Resolver = system_resolver, allow_private: bool = False) -> None:
        self._transport = transport
        self._resolve = resolver
        self.allow_private = allow_private

    async def fetch(self, url: str) -> tuple[Client, int]:
        """The client the document at `url` describes, and how long it may be kept; OAuthError
        (`invalid_client`) for anything unusable."""
        parts = urlsplit(url)
        if parts.scheme != "https" or not parts.hostname or "@" in parts.netloc or parts.fragment \
                or not parts.path or parts.path == "/":
            raise OAuthError("invalid_client", "The client ID is not a usable metadata URL")
        try:
            addresses = await asyncio.wait_for(self._resolve(parts.hostname, parts.port or 443), TIMEOUT)
        except (OSError, TimeoutError):
            raise OAuthError("invalid_client", "The client's metadata host does not resolve") from None
        if not addresses or (not self.allow_private and not all(public(a) for a in addresses)):
            raise OAuthError("invalid_client", "The client's metadata host is not a public address")
        try:
            async with httpx.AsyncClient(transport=self._transport, timeout=TIMEOUT, follow_redirects=False,
                                         trust_env=False) as http:
                status, raw, cache = await asyncio.wait_for(self._get(http, url), TIMEOUT)
        except (httpx.HTTPError, InflateError, TimeoutError):
            raise OAuthError("invalid_client", "The client's metadata document could not be fetched") from None
        if status != 200:
            raise OAuthError("invalid_client", "The client's metadata document could not be fetched")
        try:
            doc = msgspec.json.decode(raw)
        except (msgspec.DecodeError, RecursionError):
            raise OAuthError("invalid_client", "The client's metadata document is not JSON") from None
        return client_of(url, doc), ttl_of(cache)

    async def _get(self, http: httpx.AsyncClient, url: str) -> tuple[int, bytes, str]:
        async with http.stream("GET", url, headers={"accept": "application/json",
                                                   "accept-encoding": ACCEPT_ENCODING}) as response:
            raw = await read_body(response, MAX_BYTES)
            return response.status_code, raw, response.headers.get("cache-control", "")


def client_of(url: str, doc: Any) -> Client:
    if not isinstance(doc, dict) or doc.get("client_id") != url:
        raise OAuthError("invalid_client", "The client's metadata document names another client_id")
    uris = doc.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > 10:
        raise OAuthError("invalid_client", "The client's metadata document has no usable redirect_uris")
    try:
        checked = [check_redirect_uri(u) for u in uris]
    except OAuthError:
        raise OAuthError("invalid_client", "The client's metadata document has an unusable redirect URI") from None
    method = doc.get("token_endpoint_auth_method", "none")
    if method != "none":
        raise OAuthError("invalid_client", "Only public clients (token_endpoint_auth_method none) "
                                           "may use a metadata document here")
    grants = doc.get("grant_types", ["authorization_code"])
    if not isinstance(grants, list) or "authorization_code" not in grants:
        raise OAuthError("invalid_client", "The client's metadata document does not use authorization codes")
    name = doc.get("client_name")
    if not isinstance(name, str) or len(name) > 200 or not name.isprintable():
        name = None
    return Client(client_id=url, redirect_uris=checked, auth_method="none", name=name,
                  grant_types=[g for g in ("authorization_code", "refresh_token") if g in grants])


def ttl_of(cache_control: str) -> int:
    found = _MAX_AGE.search(cache_control.lower())
    if "no-store" in cache_control.lower():
        return 60
    return max(60, min(86400, int(found.group(1)))) if found else 3600
