"""URL rules for the resource and issuers: checked at start-up, compared per RFC 8707."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_url(url: object, what: str) -> str:
    """An absolute https URL without fragment (http only on a loopback host), or ValueError."""
    if not isinstance(url, str) or not url:
        raise ValueError(f"{what} is required (an absolute https URL)")
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("https", "http") or not parts.hostname:
        raise ValueError(f"{what} must be an absolute https URL, got {url!r}")
    if parts.fragment or "#" in url:
        raise ValueError(f"{what} must not have a fragment: {url!r}")
    if parts.scheme.lower() == "http" and not is_loopback(parts.hostname):
        raise ValueError(f"{what} must use https outside loopback, got {url!r}")
    return url


def canonical(url: str) -> str:
    """Scheme and host lower-cased, no trailing slash on the path (RFC 8707 / MCP canonical URI)."""
    parts = urlsplit(url)
    netloc = parts.netloc.lower()
    path = parts.path.rstrip("/")
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme.lower()}://{netloc}{path}{query}"


def same_resource(a: str, b: str) -> bool:
    return a == b or canonical(a) == canonical(b)
