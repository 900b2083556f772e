"""ASGI plumbing both Streamable HTTP halves share: header maps and response writers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from ...wire.errors import McpError, http_status
from ...wire.jsonrpc import error_response

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
Headers = dict[bytes, list[bytes]]

_encode = msgspec.json.encode
JSON_HEADERS = [(b"content-type", b"application/json")]
SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]
KEEPALIVE_FRAME = b": keep-alive\n\n"


def header_map(scope: Scope) -> Headers:
    """Every request header by lower-cased name; repeated headers keep every value."""
    out: Headers = {}
    for name, value in scope["headers"]:
        name = name.lower()
        have = out.get(name)
        if have is None:
            out[name] = [value]  # no throwaway list per header, as setdefault would make
        else:
            have.append(value)
    return out


def header_value(headers: Headers, name: bytes, strip: str | None = None) -> str | None:
    """The first value of a header, decoded as Latin-1 and stripped (`strip` characters, or
    all whitespace), or None when absent."""
    values = headers.get(name)
    if not values:
        return None
    return values[0].decode("latin-1").strip(strip)


def sse_frame(message: dict[str, Any], event_id: str | None = None) -> bytes:
    head = b"id: " + event_id.encode() + b"\n" if event_id is not None else b""
    return head + b"event: message\ndata: " + _encode(message) + b"\n\n"


async def send_json(send: Send, status: int, body: dict[str, Any],
                    extra: list[tuple[bytes, bytes]] | None = None) -> None:
    data = _encode(body)
    headers = [*JSON_HEADERS, (b"content-length", str(len(data)).encode())]
    if extra:
        headers.extend(extra)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


async def send_error(send: Send, rid: Any, exc: McpError, status: int | None = None) -> None:
    """A JSON-RPC error body, with the status the code maps to unless one is given."""
    await send_json(send, http_status(exc.code) if status is None else status,
                    error_response(rid, exc))


async def send_plain(send: Send, status: int, body: bytes = b"",
                     extra: list[tuple[bytes, bytes]] | None = None) -> None:
    headers = [(b"content-length", str(len(body)).encode())]
    if body:
        headers.append((b"content-type", b"text/plain; charset=utf-8"))
    if extra:
        headers.extend(extra)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def start_stream(send: Send) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
