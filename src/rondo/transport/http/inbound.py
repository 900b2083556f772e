"""The inbound checks of Streamable HTTP, as functions of what arrived: no I/O, no ASGI.

Every HTTP front end asks these, in the order the conformance contract fixes: is this the
endpoint (`at_endpoint`); the method (`method_route`); the headers alone (`header_problem`: one
Host, a JSON Content-Type, an Accept the answer can use); Host and Origin (`HostCheck`, and
`hostname` / `origin_hostname` for a front with its own lists, `fleet/front.py`); the body's
declared size (`declared_too_large`); then, on the decoded message, the era (`era_of`) and for
a 2026-07-28 request the routing headers, the `_meta` envelope, the header/`_meta` version
match, version support and `Mcp-Param-*` (`checked_request`). The ASGI app (`app.py`) reads
the request and writes the answers; each check here answers with a status or an `McpError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ...wire.envelope import Envelope, check_version, envelope
from ...wire.era import LEGACY, MODERN, has_modern_meta, http_era
from ...wire.errors import HEADER_MISMATCH, INVALID_REQUEST, McpError
from ...wire.headers import HeaderValueError, check_param_headers, decode_value
from ...wire.jsonrpc import request_shape
from ...wire.meta import NAME_FIELDS
from .asgi import Headers, header_value

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
# Distinct Host (and Accept) values judged and remembered, at most.
_SEEN_LIMIT = 256
_ROUTING = (b"mcp-method", b"mcp-name", b"mcp-protocol-version")
_ACCEPTABLE = ("application/json", "text/event-stream", "application/*", "text/*", "*/*")
# A client sends the same Accept on every request: judge each distinct value once (bounded).
_ACCEPT_SEEN: dict[bytes, bool] = {}

NOT_MODERN = "This endpoint speaks MCP 2026-07-28: send per-request _meta and MCP-Protocol-Version"


# -- where, and which method ---------------------------------------------------------------------


def at_endpoint(endpoint: str | None, scope: Mapping[str, Any]) -> bool:
    """Is the request's path the endpoint? `endpoint` is the served path without a trailing
    slash (None: any path). Mounted under a `root_path`, the mount point is the endpoint."""
    if endpoint is None:
        return True
    path: str = scope.get("path", "")
    if path == endpoint and not scope.get("root_path"):
        return True  # the usual request, unmounted
    root: str = scope.get("root_path", "")
    if root and path.startswith(root):
        return path[len(root):].rstrip("/") == ""
    return path.rstrip("/") == endpoint


def method_route(method: str, legacy: bool) -> str | None:
    """`MODERN` for POST (its body names the era, `era_of`); `LEGACY` for the 2025-11-25
    session's GET and DELETE when that era is served; None: 405, only POST is allowed."""
    if method == "POST":
        return MODERN
    if legacy and method in ("GET", "DELETE"):
        return LEGACY
    return None


# -- the headers alone --------------------------------------------------------------------------


def header_problem(headers: Headers, method: str) -> tuple[int, McpError] | None:
    """(HTTP status, error) for a request to refuse on its headers alone, else None.

    One `Host` header (two are an ambiguity a proxy and we could read differently: 400); on
    POST, a JSON `Content-Type` when one is given (415) and an `Accept` naming JSON or SSE (406):
    the server answers with one or the other, and a client that takes neither cannot read it."""
    if len(headers.get(b"host", ())) > 1:
        return 400, McpError(INVALID_REQUEST, "Bad Request: more than one Host header")
    if method != "POST":
        return None
    ctype = headers.get(b"content-type")
    if ctype and ctype[0] != b"application/json":  # the usual value needs no parsing
        media = ctype[0].split(b";", 1)[0].strip().lower()
        if media != b"application/json":
            return 415, McpError(INVALID_REQUEST,
                                 "Unsupported Media Type: Content-Type must be application/json")
    values = headers.get(b"accept")
    raw = b"" if not values else values[0] if len(values) == 1 else b",".join(values)
    if not _accepts(raw):
        return 406, McpError(INVALID_REQUEST,
                             "Not Acceptable: Accept must include application/json and "
                             "text/event-stream")
    return None


def _accepts(raw: bytes) -> bool:
    ok = _ACCEPT_SEEN.get(raw)
    if ok is None:
        accept = raw.decode("latin-1").lower()
        offered = {part.split(";", 1)[0].strip() for part in accept.split(",")}
        ok = bool(offered.intersection(_ACCEPTABLE))
        if len(_ACCEPT_SEEN) >= _SEEN_LIMIT:
            _ACCEPT_SEEN.clear()
        _ACCEPT_SEEN[raw] = ok
    return ok


# -- Host and Origin ----------------------------------------------------------------------------


def hostname(host: str) -> str:
    """The host name of a `Host` value or an allow-list entry: lower-cased, without the port
    (an IPv6 literal keeps its brackets)."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        return host[: end + 1] if end != -1 else host
    return host.rsplit(":", 1)[0] if ":" in host else host


def origin_hostname(origin: str) -> str | None:
    """The host name an `Origin` value names, or None when it is not an http(s) origin."""
    scheme, sep, rest = origin.strip().lower().partition("://")
    if not sep or scheme not in ("http", "https"):
        return None
    return hostname(rest.split("/", 1)[0])


class HostCheck:
    """DNS-rebinding protection: the `Host` (and the `Origin`, when present) must name an allowed
    host. `allowed` None turns the check off. Each distinct Host value is judged once (bounded)."""

    __slots__ = ("allowed", "_seen")

    def __init__(self, allowed: Iterable[str] | None) -> None:
        self.allowed = None if allowed is None else frozenset(hostname(h) for h in allowed)
        self._seen: dict[bytes, bool] = {}

    def __call__(self, headers: Headers) -> bool:
        allowed = self.allowed
        if allowed is None:
            return True
        host = headers.get(b"host")
        if not host:
            return False
        seen = self._seen
        ok = seen.get(host[0])
        if ok is None:
            ok = hostname(host[0].decode("latin-1")) in allowed
            if len(seen) >= _SEEN_LIMIT:
                seen.clear()
            seen[host[0]] = ok
        if not ok:
            return False
        origin = headers.get(b"origin")
        return not origin or origin_hostname(origin[0].decode("latin-1")) in allowed


def host_refusal(headers: Headers, allowed: frozenset[str] | None) -> str:
    """The 403's message for a request `HostCheck` refused: which header named what, and the
    setting that allows it."""
    host = headers.get(b"host")
    if not host:
        return "Forbidden: the request has no Host header"
    origin = headers.get(b"origin")
    host_ok = allowed is None or hostname(host[0].decode("latin-1")) in allowed
    what = f"Origin {shown(origin[0])}" if origin and host_ok else f"Host {shown(host[0])}"
    return (f"Forbidden: {what} is not allowed; add its host name to server.asgi(allowed_hosts=...) "
            "or rondo run --allowed-hosts")


def shown(value: bytes) -> str:
    """A header value fit to echo in a message: printable ASCII, at most 100 characters."""
    text = "".join(c if " " <= c <= "~" else "?" for c in value.decode("latin-1")[:100])
    return repr(text + ("..." if len(value) > 100 else ""))


# -- the body -----------------------------------------------------------------------------------


def declared_too_large(headers: Headers, max_body: int) -> bool:
    """Does `Content-Length` announce more than `max_body` bytes? (Unreadable: the bytes that
    arrive are counted instead.)"""
    length = headers.get(b"content-length")
    if not length:
        return False
    try:
        return int(length[0]) > max_body
    except ValueError:
        return False


# -- the decoded message ------------------------------------------------------------------------


def era_of(msg: dict[str, Any], headers: Headers) -> str:
    """The era a decoded POST body speaks: `MODERN` for 2026-07-28, else the legacy era."""
    if b"mcp-session-id" not in headers and has_modern_meta(msg):
        return MODERN  # the usual 2026-07-28 request, without asking the headers
    return http_era(msg, header_value(headers, b"mcp-session-id"),
                    header_value(headers, b"mcp-protocol-version"))


def checked_request(
    msg: dict[str, Any],
    headers: Headers,
    header_version: str | None,
    plain_tool: bytes | None,
    tools: Mapping[str, Any],
) -> tuple[Any, str, dict[str, Any], Envelope, Any] | None:
    """(id, method, params, envelope, the tool a `tools/call` names or None) for a 2026-07-28
    request whose routing headers, envelope, version and `Mcp-Param-*` pass; None for a
    notification or response (answered 202). Raises the `McpError` of the first check failing.

    `header_version` is `MCP-Protocol-Version` as read, `plain_tool` the raw `Mcp-Name` of the
    usual tools/call routing (`verdicts.plain_tool_name`): naming this very tool, it passes every
    routing check without running them."""
    rid, method, params, is_request = request_shape(msg)
    if not is_request:
        return None
    tool = None
    if method == "tools/call":
        name = params.get("name")
        tool = tools.get(name) if type(name) is str else None
    if tool is None or tool.header_name is None or plain_tool != tool.header_name:
        check_routing(headers, method, params)
    env = envelope(params)
    if header_version != env.version:  # equal: the check passes
        check_header(headers, b"mcp-protocol-version", "MCP-Protocol-Version", env.version)
    check_version(env)
    if tool is not None and tool.header_params:
        problem = check_param_headers(
            lambda name: header_value(headers, name.encode(), " \t"),
            tool.header_params, params.get("arguments"))
        if problem is not None:
            raise mismatch(problem)
    return rid, method, params, env, tool


def mismatch(message: str) -> McpError:
    return McpError(HEADER_MISMATCH, f"Header mismatch: {message}")


def check_routing(headers: Headers, method: str, params: dict[str, Any]) -> None:
    """Each routing header at most once; `Mcp-Method` and `Mcp-Name` mirror the body."""
    for header in _ROUTING:
        if len(headers.get(header, ())) > 1:
            raise mismatch(f"{header.decode()} header given more than once")
    check_header(headers, b"mcp-method", "Mcp-Method", method)
    field = NAME_FIELDS.get(method)
    if field is not None:
        check_name(headers, field, params.get(field))


def check_header(headers: Headers, name: bytes, label: str, expected: str) -> None:
    value = header_value(headers, name, " \t")
    if value is None:
        raise mismatch(f"{label} header is required")
    if value != expected:
        raise mismatch(f"{label} header value {value!r} does not match body value {expected!r}")


def check_name(headers: Headers, field: str, expected: Any) -> None:
    raw = header_value(headers, b"mcp-name", " \t")
    if raw is None:
        raise mismatch("Mcp-Name header is required")
    try:
        value = decode_value(raw)
    except HeaderValueError as exc:
        raise mismatch(f"Mcp-Name: {exc}") from None
    if value != expected:
        raise mismatch(f"Mcp-Name header value {value!r} does not match body {field} {expected!r}")
