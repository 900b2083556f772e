"""HTTP header checks that come before anything else on the endpoint.

One `Host` header (two are an ambiguity a proxy and we could read differently: 400); on POST,
a JSON `Content-Type` when one is given (415) and an `Accept` naming JSON or SSE (406): the
server answers with one or the other, and a client that takes neither cannot read the answer.
"""

from __future__ import annotations

from ...wire.errors import INVALID_REQUEST, McpError
from .asgi import Headers

_ACCEPTABLE = ("application/json", "text/event-stream", "application/*", "text/*", "*/*")
# A client sends the same Accept on every request: judge each distinct value once (bounded).
_ACCEPT_SEEN: dict[bytes, bool] = {}
_ACCEPT_LIMIT = 256


def header_problem(headers: Headers, method: str) -> tuple[int, McpError] | None:
    """(HTTP status, error) for a request to refuse on its headers alone, else None."""
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
        if len(_ACCEPT_SEEN) >= _ACCEPT_LIMIT:
            _ACCEPT_SEEN.clear()
        _ACCEPT_SEEN[raw] = ok
    return ok
