"""The HTTP side of `rondo.auth`: what the Streamable HTTP transport calls, in order.

1. `serves_metadata(path)` / `metadata(...)`: the RFC 9728 document at its well-known path(s).
2. `cached(headers)`, then `authenticate(headers, send)`: the bearer token to a `Principal`,
   or a 401/400/503 sent.
3. `insufficient(method, params, principal)` / `forbid(...)`: the 403 step-up challenge naming
   every scope the operation needs.
4. `bind_session` / `session_ok`: a legacy `Mcp-Session-Id` session belongs to one principal.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from ..wire.errors import INTERNAL_ERROR, INVALID_REQUEST
from .challenge import BadRequest, bearer_token, www_authenticate
from .errors import InvalidToken, VerifierUnavailable
from .principal import Principal
from .scopes import Registry, required_for

if TYPE_CHECKING:
    from .config import ResourceServer

log = logging.getLogger("rondo.auth")

Send = Callable[[dict[str, Any]], Awaitable[None]]
_encode = msgspec.json.encode


class HttpGuard:
    def __init__(self, server: Registry, rs: ResourceServer, endpoint_path: str | None = None) -> None:
        self.server = server
        self.rs = rs
        if endpoint_path is not None and (endpoint_path or "/") != rs.endpoint_path:
            # Legitimate behind a path-rewriting proxy, a mistake otherwise: say so at start-up.
            log.warning("rondo.auth: the endpoint is served at %r but the resource URL %s names "
                        "path %r; clients will look for its metadata at %s",
                        endpoint_path, rs.resource, rs.endpoint_path, rs.metadata_path)
        self.metadata_paths = rs.metadata_paths
        self.endpoint_paths = rs.endpoint_paths
        if rs.endpoints is not None:
            rs.endpoints.started()  # the facade's start-up guard (a fleet needs a shared store)
        self._metadata_body = _encode(rs.metadata())

    # -- 1. discovery ---------------------------------------------------------------------------

    async def metadata(self, method: str, send: Send) -> None:
        if method not in ("GET", "HEAD", "OPTIONS"):
            await _send(send, 405, b"", [(b"allow", b"GET, HEAD, OPTIONS")])
            return
        cors = [(b"access-control-allow-origin", b"*"),
                (b"access-control-allow-methods", b"GET, HEAD, OPTIONS")]
        if method == "OPTIONS":
            await _send(send, 204, b"", cors)
            return
        body = self._metadata_body
        headers = [(b"content-type", b"application/json"), (b"cache-control", b"public, max-age=300"),
                   *cors]
        await _send(send, 200, b"" if method == "HEAD" else body, headers, length=len(body))

    # -- 2. the bearer token --------------------------------------------------------------------

    def _cache_key(self, headers: Mapping[bytes, list[bytes]]) -> bytes | None:
        """The cache key of the request's one `Authorization` header (the digest of the raw
        header, before any parsing), or None when there is no single header of a usable size."""
        values = headers.get(b"authorization")
        if values is None or len(values) != 1 or len(values[0]) > self.rs.max_token_length:
            return None
        return self.rs.cache.digest_bytes(values[0])

    def cached(self, headers: Mapping[bytes, list[bytes]]) -> Principal | None:
        """The principal of a header already verified (a client reuses its token); None:
        `authenticate` decides. A plain function, so the usual request awaits nothing here."""
        key = self._cache_key(headers)
        return None if key is None else self.rs.cache.get(key)

    async def authenticate(self, headers: Mapping[bytes, list[bytes]], send: Send) -> Principal | None:
        """The principal of the request's bearer token, or None with a 401, 400 or 503 sent.
        (`ResourceServer.authenticate` looks in the cache first, by the same key.)"""
        rs = self.rs
        values = headers.get(b"authorization")
        key = self._cache_key(headers)
        try:
            token = bearer_token(values, rs.max_token_length)
            if token is None:
                await self._refuse(send, 401, "Unauthorized: a bearer access token is required")
                return None
            return await rs.authenticate(token, key=key)
        except InvalidToken as exc:
            await self._refuse(send, 401, f"Unauthorized: {exc.description}",
                               error="invalid_token", description=exc.description)
        except BadRequest as exc:
            await self._refuse(send, 400, f"Bad Request: {exc}", error="invalid_request",
                               description=str(exc), scopes=False)
        except VerifierUnavailable as exc:
            log.warning("rondo.auth: cannot verify tokens: %s", exc)
            body = _error_body(None, INTERNAL_ERROR,
                               "Authorization server unavailable: try again later")
            await _send(send, 503, body, [(b"content-type", b"application/json"),
                                          (b"retry-after", str(rs.retry_after).encode())])
        return None

    async def _refuse(self, send: Send, status: int, message: str, *, error: str | None = None,
                      description: str | None = None, scopes: bool = True) -> None:
        rs = self.rs
        challenge = www_authenticate(rs.metadata_url, rs.challenge_scopes() if scopes else (),
                                     error=error, description=description)
        await _send(send, status, _error_body(None, INVALID_REQUEST, message),
                    [(b"content-type", b"application/json"), (b"www-authenticate", challenge)])

    # -- 3. scopes ------------------------------------------------------------------------------

    def insufficient(self, method: str, params: Mapping[str, Any], principal: Any) -> tuple[str, ...]:
        """Every scope the request needs when the token lacks any of them; () when allowed."""
        if not isinstance(principal, Principal):
            return ()
        needed = required_for(self.server, self.rs.required_scopes, method, params)
        return needed if needed and not principal.has_scopes(needed) else ()

    def allows_tool(self, name: str, principal: Any) -> bool:
        """May this principal call the tool `name`? (`insufficient` for a `tools/call` of it.)"""
        return not self.insufficient("tools/call", {"name": name}, principal)

    async def forbid(self, send: Send, rid: Any, needed: tuple[str, ...]) -> None:
        description = "This operation needs scope " + " ".join(needed)
        challenge = www_authenticate(self.rs.metadata_url, needed, error="insufficient_scope",
                                     description=description)
        body = _error_body(rid, INVALID_REQUEST, "Forbidden: insufficient scope",
                           {"requiredScopes": list(needed)})
        await _send(send, 403, body, [(b"content-type", b"application/json"),
                                      (b"www-authenticate", challenge)])

    # -- 4. legacy sessions -----------------------------------------------------------------------

    @staticmethod
    def bind_session(session: Any, principal: Any) -> None:
        session.principal = principal.binding if isinstance(principal, Principal) else None

    @staticmethod
    def session_ok(session: Any, principal: Any) -> bool:
        """Only the principal that opened a session may use it (no hijack by session id)."""
        mine = principal.binding if isinstance(principal, Principal) else None
        return getattr(session, "principal", None) == mine


def _error_body(rid: Any, code: int, message: str, data: Any = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    msg: dict[str, Any] = {"jsonrpc": "2.0"}
    if rid is not None and not isinstance(rid, bool) and isinstance(rid, str | int):
        msg["id"] = rid
    msg["error"] = error
    return _encode(msg)


async def _send(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]],
                length: int | None = None) -> None:
    size = len(body) if length is None else length
    await send({"type": "http.response.start", "status": status,
                "headers": [*headers, (b"content-length", str(size).encode())]})
    await send({"type": "http.response.body", "body": body})
