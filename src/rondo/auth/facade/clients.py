"""MCP clients the facade knows: registered dynamically (RFC 7591), checked exactly."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import msgspec

from ..urls import is_loopback
from .errors import OAuthError

GRANT_CODE = "authorization_code"
GRANT_REFRESH = "refresh_token"
AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")
MAX_REDIRECTS = 10
MAX_URI = 2000
# RFC 8252 §7.1: a private-use scheme is a reversed domain name (com.example.app).
_PRIVATE_SCHEME = re.compile(r"[a-z][a-z0-9+\-]*(\.[a-z0-9+\-]+)+")
_REFUSED_SCHEMES = frozenset({"javascript", "data", "file", "vbscript", "about", "blob"})


class Client(msgspec.Struct, omit_defaults=True):
    client_id: str
    redirect_uris: list[str]
    auth_method: str = "none"
    secret_digest: str | None = None
    name: str | None = None
    issued_at: int = 0
    grant_types: list[str] = msgspec.field(default_factory=lambda: ["authorization_code", "refresh_token"])


def check_redirect_uri(uri: Any) -> str:
    """An acceptable redirect URI to register: https, http on a loopback host (native apps,
    RFC 8252 §7.3), or a private-use scheme; no fragment, no userinfo."""
    if not isinstance(uri, str) or not uri or len(uri) > MAX_URI or not uri.isascii():
        raise OAuthError("invalid_redirect_uri", "a redirect URI must be an absolute URL string")
    if any(c in uri for c in " \t\r\n<>\"\\"):
        raise OAuthError("invalid_redirect_uri", "a redirect URI holds characters it may not")
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if "#" in uri:
        raise OAuthError("invalid_redirect_uri", "a redirect URI must not have a fragment")
    if scheme == "https":
        ok = bool(parts.hostname) and "@" not in parts.netloc
    elif scheme == "http":
        ok = is_loopback(parts.hostname) and "@" not in parts.netloc
    else:
        ok = scheme not in _REFUSED_SCHEMES and bool(_PRIVATE_SCHEME.fullmatch(scheme))
    if not ok:
        raise OAuthError("invalid_redirect_uri", "redirect URIs must be https, http on a "
                         "loopback host, or a private-use scheme (com.example.app:/cb)")
    return uri


def _strings(value: Any) -> bool:
    """A JSON list of strings (a list holding lists or objects cannot go into a set)."""
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def check_registration(doc: Any) -> dict[str, Any]:
    """The client metadata of a registration request, validated; OAuthError otherwise."""
    if not isinstance(doc, dict):
        raise OAuthError("invalid_client_metadata", "the registration must be a JSON object")
    uris = doc.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > MAX_REDIRECTS:
        raise OAuthError("invalid_redirect_uri",
                         f"redirect_uris must list 1 to {MAX_REDIRECTS} URIs")
    checked = [check_redirect_uri(u) for u in uris]
    method = doc.get("token_endpoint_auth_method", "client_secret_basic")
    if method not in AUTH_METHODS:
        raise OAuthError("invalid_client_metadata",
                         f"token_endpoint_auth_method must be one of {', '.join(AUTH_METHODS)}")
    grants = doc.get("grant_types", ["authorization_code"])
    if (not _strings(grants) or not grants
            or not set(grants) <= {"authorization_code", "refresh_token"}
            or "authorization_code" not in grants):
        raise OAuthError("invalid_client_metadata",
                         "grant_types may be authorization_code and refresh_token")
    responses = doc.get("response_types", ["code"])
    if not _strings(responses) or set(responses) != {"code"}:
        raise OAuthError("invalid_client_metadata", "response_types must be [\"code\"]")
    name = doc.get("client_name")
    if name is not None and (not isinstance(name, str) or len(name) > 200
                             or not name.isprintable()):
        raise OAuthError("invalid_client_metadata", "client_name must be printable, 200 "
                         "characters at most")
    return {"redirect_uris": checked, "token_endpoint_auth_method": method,
            "grant_types": list(dict.fromkeys(grants)), "response_types": ["code"],
            **({"client_name": name} if name else {})}
