"""Finding who guards a server: protected resource metadata (RFC 9728), then the
authorization server's metadata (RFC 8414 and OpenID Connect Discovery, in the MCP order).

Both documents are validated before anything in them is used: the resource must name the
server being called, and the authorization server's `issuer` must be exactly the identifier
the well-known URL was built from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from rondo.client.auth.errors import DiscoveryError
from rondo.client.auth.fetch import Limits, exchange

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"


@dataclass(frozen=True)
class ResourceMetadata:
    resource: str
    authorization_servers: list[str]
    scopes_supported: list[str] | None
    url: str


@dataclass(frozen=True)
class ServerMetadata:
    issuer: str
    authorization_endpoint: str | None
    token_endpoint: str
    registration_endpoint: str | None = None
    scopes_supported: list[str] | None = None
    grant_types_supported: list[str] | None = None
    token_endpoint_auth_methods_supported: list[str] | None = None
    code_challenge_methods_supported: list[str] | None = None
    iss_parameter_supported: bool = False
    cimd_supported: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def offers_refresh(self) -> bool:
        """Whether asking for refresh tokens makes sense at this server."""
        grants = self.grant_types_supported or []
        return "refresh_token" in grants or "offline_access" in (self.scopes_supported or [])


def resource_metadata_urls(server_url: str) -> list[str]:
    """Where RFC 9728 metadata may live for `server_url`: path-suffixed first, then root."""
    parts = urlsplit(server_url)
    path = parts.path.rstrip("/")
    root = urlunsplit((parts.scheme, parts.netloc, PRM_WELL_KNOWN, "", ""))
    if not path:
        return [root]
    return [urlunsplit((parts.scheme, parts.netloc, PRM_WELL_KNOWN + path, "", "")), root]


def server_metadata_urls(issuer: str) -> list[str]:
    """RFC 8414 then OpenID Connect well-known URLs for `issuer`, in the order MCP requires."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(p: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, p, "", ""))

    if not path:
        return [at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")]
    return [at("/.well-known/oauth-authorization-server" + path),
            at("/.well-known/openid-configuration" + path),
            at(path + "/.well-known/openid-configuration")]


def resource_covers(resource: str, server_url: str) -> bool:
    """True when the metadata's `resource` identifies `server_url`: same origin, and its
    path is the server's path or a parent of it on a segment boundary (RFC 8707 lets the
    resource be less specific; a root PRM names the origin)."""
    r, s = urlsplit(resource), urlsplit(server_url)
    if r.fragment or not r.scheme or not r.netloc:
        return False
    if (r.scheme.lower(), _host_port(r)) != (s.scheme.lower(), _host_port(s)):
        return False
    rpath, spath = r.path.rstrip("/"), s.path.rstrip("/")
    return spath == rpath or spath.startswith(rpath + "/")


def _host_port(parts: Any) -> tuple[str, int | None]:
    try:
        port = parts.port
    except ValueError:
        return ("", -1)
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    return ((parts.hostname or "").lower(), port if port is not None else default)


LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


def _http_url(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc) and not parts.fragment


def _secure_url(value: Any) -> bool:
    """OAuth 2.1 §1.5: authorization server URLs use TLS; plain http only on loopback."""
    if not _http_url(value):
        return False
    parts = urlsplit(value)
    return parts.scheme == "https" or (parts.hostname or "") in LOOPBACK


def _str_list(doc: dict[str, Any], key: str) -> list[str] | None:
    value = doc.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DiscoveryError(f"metadata field {key!r} is not a list of strings")
    return list(value)


async def fetch_resource_metadata(
    http: httpx.AsyncClient, server_url: str, hint: str | None, limits: Limits
) -> ResourceMetadata:
    """The server's protected resource metadata: the challenge's `resource_metadata` URL when
    given, else the well-known URLs. A document naming another resource is refused."""
    candidates = ([hint] if hint and _http_url(hint) else []) + resource_metadata_urls(server_url)
    tried: list[str] = []
    for url in dict.fromkeys(candidates):
        reply = await exchange(http, "GET", url, limits, error=DiscoveryError)
        tried.append(f"{url} ({reply.status})")
        if reply.status != 200:
            continue
        doc = reply.json()
        if not isinstance(doc, dict):
            raise DiscoveryError(f"protected resource metadata at {url} is not a JSON object")
        resource = doc.get("resource")
        servers = _str_list(doc, "authorization_servers") or []
        if not isinstance(resource, str) or not resource_covers(resource, server_url):
            raise DiscoveryError(
                f"protected resource metadata at {url} names resource {resource!r}, "
                f"which is not {server_url}: refusing to authorize for it")
        servers = [s for s in servers if _secure_url(s)]
        if not servers:
            raise DiscoveryError(f"protected resource metadata at {url} lists no usable authorization server "
                                 "(an https URL, or http on loopback)")
        return ResourceMetadata(resource, servers, _str_list(doc, "scopes_supported"), url)
    raise DiscoveryError("no protected resource metadata found (tried " + ", ".join(tried) + ")")


async def fetch_server_metadata(http: httpx.AsyncClient, issuer: str, limits: Limits) -> ServerMetadata:
    """The authorization server's metadata; its `issuer` must equal `issuer` exactly."""
    tried: list[str] = []
    for url in server_metadata_urls(issuer):
        reply = await exchange(http, "GET", url, limits, error=DiscoveryError)
        tried.append(f"{url} ({reply.status})")
        if reply.status != 200:
            continue
        doc = reply.json()
        if not isinstance(doc, dict):
            raise DiscoveryError(f"authorization server metadata at {url} is not a JSON object")
        if doc.get("issuer") != issuer:
            raise DiscoveryError(
                f"authorization server metadata at {url} names issuer {doc.get('issuer')!r}, "
                f"not {issuer!r}: refusing to use it")
        return _server_metadata(doc, url)
    raise DiscoveryError(f"no authorization server metadata for {issuer} (tried " + ", ".join(tried) + ")")


def _server_metadata(doc: dict[str, Any], url: str) -> ServerMetadata:
    token = doc.get("token_endpoint")
    if not isinstance(token, str) or not _secure_url(token):
        raise DiscoveryError(f"authorization server metadata at {url} has no valid token_endpoint "
                             "(an https URL, or http on loopback)")
    authorize = doc.get("authorization_endpoint")
    registration = doc.get("registration_endpoint")
    return ServerMetadata(
        issuer=doc["issuer"],
        authorization_endpoint=authorize if _secure_url(authorize) else None,
        token_endpoint=token,
        registration_endpoint=registration if _secure_url(registration) else None,
        scopes_supported=_str_list(doc, "scopes_supported"),
        grant_types_supported=_str_list(doc, "grant_types_supported"),
        token_endpoint_auth_methods_supported=_str_list(doc, "token_endpoint_auth_methods_supported"),
        code_challenge_methods_supported=_str_list(doc, "code_challenge_methods_supported"),
        iss_parameter_supported=doc.get("authorization_response_iss_parameter_supported") is True,
        cimd_supported=doc.get("client_id_metadata_document_supported") is True,
        raw=doc,
    )
