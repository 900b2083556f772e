"""Webhook delivery for the events extension: Standard Webhooks signatures, callback URL rules
(SSRF), and one POST with bounded retries.

Signatures: `webhook-signature: v1,<base64 HMAC-SHA256(key, id + "." + timestamp + "." + body)>`
where the key is the base64 payload of the client's `whsec_` secret. A callback URL must be
https (http only when allowed, for tests), and its host must resolve only to globally routable
addresses unless private targets are allowed; the check runs at every delivery and the request
goes to the checked address (the host name kept for `Host` and TLS SNI), with redirects never
followed.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
import ipaddress
import socket
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

SECRET_PREFIX = "whsec_"
MAX_BODY = 256 * 1024
CATEGORIES = ("connection_refused", "timeout", "tls_error", "http_4xx", "http_5xx",
              "challenge_failed")
Resolver = Callable[[str, int], Awaitable[list[str]]]


class WebhookError(Exception):
    """A callback URL that may not be used, or a delivery that failed; `category` is one of
    the extension's `lastError` categories (never the endpoint's own words)."""

    def __init__(self, message: str, category: str | None = None) -> None:
        super().__init__(message)
        self.category = category


def parse_secret(secret: Any) -> bytes:
    """The HMAC key of a `whsec_` secret (base64 of 24 to 64 bytes), or ValueError."""
    if not isinstance(secret, str) or not secret.startswith(SECRET_PREFIX) or len(secret) > 200:
        raise ValueError("delivery.secret must be 'whsec_' followed by base64 of 24-64 random bytes")
    try:
        key = base64.b64decode(secret[len(SECRET_PREFIX):], validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("delivery.secret is not valid base64 after 'whsec_'") from None
    if not 24 <= len(key) <= 64:
        raise ValueError("delivery.secret must carry 24 to 64 bytes")
    return key


def sign(key: bytes, msg_id: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def verify(secret: str, headers: Mapping[str, str], body: bytes, *, tolerance: float = 300.0,
           now: float | None = None) -> bool:
    """A receiver's check: the signature over the raw body verifies under `secret` and the
    timestamp is within `tolerance` seconds. Header names are matched case-insensitively."""
    lowered = {k.lower(): v for k, v in headers.items()}
    msg_id, stamp, given = (lowered.get("webhook-id"), lowered.get("webhook-timestamp"),
                            lowered.get("webhook-signature"))
    if not msg_id or not stamp or not given:
        return False
    try:
        ts = int(stamp)
    except ValueError:
        return False
    if abs((time.time() if now is None else now) - ts) > tolerance:
        return False
    expected = sign(parse_secret(secret), msg_id, ts, body)
    return any(hmac.compare_digest(expected, part) for part in given.split())


def check_url(url: Any, *, allow_http: bool = False) -> tuple[str, str, int]:
    """(scheme, host, port) of an acceptable callback URL, or WebhookError."""
    if not isinstance(url, str) or len(url) > 2048:
        raise WebhookError("delivery.url must be a URL string")
    parts = urlsplit(url)
    if parts.scheme != "https" and not (allow_http and parts.scheme == "http"):
        raise WebhookError("delivery.url must use https")
    if not parts.hostname or parts.username or parts.password or parts.fragment:
        raise WebhookError("delivery.url must name a host, without credentials or fragment")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise WebhookError("delivery.url has a bad port") from None
    return parts.scheme, parts.hostname, port


async def system_resolver(host: str, port: int) -> list[str]:
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return sorted({str(info[4][0]) for info in infos})


async def pick_address(host: str, port: int, *, allow_private: bool,
                       resolver: Resolver = system_resolver) -> str:
    """One address of `host` to connect to: every resolved address must be global unless
    private targets are allowed (a name that also resolves inward is refused)."""
    try:
        addresses = await resolver(host, port)
    except OSError:
        raise WebhookError(f"cannot resolve {host}", "connection_refused") from None
    if not addresses:
        raise WebhookError(f"cannot resolve {host}", "connection_refused")
    for text in addresses:
        ip = ipaddress.ip_address(text.split("%", 1)[0])
        if not allow_private and not ip.is_global:
            raise WebhookError(f"{host} resolves to a non-public address; refused")
    return addresses[0]


class Delivery:
    """How a server POSTs to callback URLs: `attempts` tries per message (backoff `backoff` s,
    doubling), `timeout` s per try, private targets and http only when allowed, `verify` the
    TLS trust (default the system's)."""

    def __init__(self, *, attempts: int = 5, backoff: float = 1.0, timeout: float = 10.0,
                 allow_private: bool = False, allow_http: bool = False,
                 resolver: Resolver = system_resolver, verify: Any = True) -> None:
        if not 1 <= attempts <= 20 or backoff < 0 or not timeout > 0:
            raise ValueError("attempts must be 1-20, backoff >= 0 and timeout > 0")
        self.attempts = attempts
        self.backoff = backoff
        self.timeout = timeout
        self.allow_private = allow_private
        self.allow_http = allow_http
        self.resolver = resolver
        self.verify = verify  # TLS verification for httpx: True, or an ssl.SSLContext / CA file
        self._client: Any = None

    def _http(self) -> Any:
        if self._client is None:
            import httpx

            self._client = httpx.AsyncClient(follow_redirects=False, timeout=self.timeout,
                                             trust_env=False, verify=self.verify)
        return self._client

    async def post_once(self, url: str, body: bytes, headers: Mapping[str, str]) -> tuple[int, bytes]:
        """One POST to the checked address of `url`: (status, first 4 KiB of the body)."""
        import httpx

        scheme, host, port = check_url(url, allow_http=self.allow_http)
        address = await pick_address(host, port, allow_private=self.allow_private,
                                     resolver=self.resolver)
        parts = urlsplit(url)
        shown = f"[{address}]" if ":" in address else address
        target = urlunsplit((scheme, f"{shown}:{port}", parts.path or "/", parts.query, ""))
        default_port = 443 if scheme == "https" else 80
        host_header = host if port == default_port else f"{host}:{port}"
        try:
            response = await self._http().post(
                target, content=body,
                headers={**headers, "Host": host_header, "Content-Type": "application/json"},
                extensions={"sni_hostname": host})
        except httpx.TimeoutException:
            raise WebhookError("timed out", "timeout") from None
        except httpx.ConnectError as exc:
            tls = "SSL" in repr(exc) or "certificate" in str(exc).lower()
            raise WebhookError("could not connect", "tls_error" if tls else "connection_refused") from None
        except httpx.HTTPError:
            raise WebhookError("could not connect", "connection_refused") from None
        return response.status_code, response.content[:4096]

    async def send(self, url: str, key: bytes, msg_id: str, body: bytes,
                   extra: Mapping[str, str], *, attempts: int | None = None,
                   sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> bytes:
        """POST one signed message, retrying failures up to `attempts` times (a fresh
        timestamp and signature each try; 413 and other 4xx but 408/425/429 are final).
        Returns the accepting response's body; raises WebhookError with the last category."""
        if len(body) > MAX_BODY:
            raise WebhookError(f"webhook body over {MAX_BODY} bytes", "http_4xx")
        tries = self.attempts if attempts is None else attempts
        last: WebhookError | None = None
        for attempt in range(tries):
            if attempt:
                await sleep(self.backoff * (2 ** (attempt - 1)))
            ts = int(time.time())
            headers = {"webhook-id": msg_id, "webhook-timestamp": str(ts),
                       "webhook-signature": sign(key, msg_id, ts, body), **extra}
            try:
                status, content = await self.post_once(url, body, headers)
            except WebhookError as exc:
                if exc.category is None:
                    raise  # a refused URL: retrying cannot help
                last = exc
                continue
            if 200 <= status < 300:
                return content
            last = WebhookError(f"endpoint answered {status}",
                                "http_4xx" if status < 500 else "http_5xx")
            if 400 <= status < 500 and status not in (408, 425, 429):
                break
        assert last is not None
        raise last

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
