"""The little HTTP the facade's endpoints need, on raw ASGI: query and form parsing within a
size cap, cookies, the three kinds of answer (JSON, a redirect, a small HTML page), and CORS
for the endpoints browser-based clients call."""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import msgspec

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

MAX_FORM = 16 * 1024
MAX_PARAMS = 64
NO_STORE = [(b"cache-control", b"no-store"), (b"pragma", b"no-cache")]
# The consent page: never framed (clickjacking), nothing loaded from anywhere.
PAGE_HEADERS = [(b"content-type", b"text/html; charset=utf-8"), (b"x-frame-options", b"DENY"),
                (b"content-security-policy",
                 b"default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"),
                (b"referrer-policy", b"no-referrer"), *NO_STORE]


# CORS preflight answer for the endpoints browser-based clients call (no cookies involved).
PREFLIGHT = [(b"access-control-allow-origin", b"*"),
             (b"access-control-allow-methods", b"GET, POST, OPTIONS"),
             (b"access-control-allow-headers", b"authorization, content-type"),
             (b"access-control-max-age", b"600"), (b"content-length", b"0")]


class BadForm(Exception):
    """A body or query the facade will not read: too large, repeated parameters, not a form."""


def params_of(text: str) -> dict[str, str]:
    """`a=1&b=2` -> dict; a repeated parameter is refused (RFC 6749 §3.1: MUST NOT repeat)."""
    if len(text) > MAX_FORM:
        raise BadForm("too large")
    try:
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=False, errors="strict",
                          max_num_fields=MAX_PARAMS)
    except (ValueError, UnicodeDecodeError):
        raise BadForm("not a form") from None
    out: dict[str, str] = {}
    for key, value in pairs:
        if key in out:
            raise BadForm(f"repeated parameter {key}")
        out[key] = value
    return out


def query_of(scope: Scope) -> dict[str, str]:
    raw = scope.get("query_string", b"")
    try:
        return params_of(raw.decode("ascii"))
    except UnicodeDecodeError:
        raise BadForm("not ASCII") from None


async def body_of(receive: Receive, limit: int = MAX_FORM) -> bytes:
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise BadForm("disconnected")
        body += message.get("body", b"")
        if len(body) > limit:
            raise BadForm("too large")
        if not message.get("more_body", False):
            return bytes(body)


def header(scope: Scope, name: bytes) -> str | None:
    found = None
    for key, value in scope.get("headers", ()):
        if key == name:
            if found is not None:
                return None  # a repeated header counts as none
            found = value.decode("latin-1")
    return found


def cookies_of(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in scope.get("headers", ()):
        if key == b"cookie":
            for part in value.decode("latin-1").split(";"):
                name, sep, val = part.strip().partition("=")
                if sep and name not in out:
                    out[name] = val
    return out


def cookie(name: str, value: str, *, secure: bool, max_age: int, path: str = "/") -> tuple[bytes, bytes]:
    attrs = f"{name}={value}; Path={path}; Max-Age={max_age}; HttpOnly; SameSite=Lax"
    if secure:
        attrs += "; Secure"
    return (b"set-cookie", attrs.encode("latin-1"))


async def send_json(send: Send, status: int, body: Mapping[str, Any],
                    extra: list[tuple[bytes, bytes]] | None = None) -> None:
    data = msgspec.json.encode(body)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
               *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


async def send_redirect(send: Send, location: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    headers = [(b"location", location.encode("ascii")), (b"content-length", b"0"), *NO_STORE,
               *(extra or [])]
    await send({"type": "http.response.start", "status": 302, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


async def send_page(send: Send, status: int, title: str, body_html: str,
                    extra: list[tuple[bytes, bytes]] | None = None) -> None:
    page = (f"<!doctype html><html><head><meta charset=utf-8><title>{html.escape(title)}</title>"
            "<style>body{font-family:sans-serif;max-width:36em;margin:3em auto;line-height:1.4}"
            "code{word-break:break-all}</style></head>"
            f"<body><h1>{html.escape(title)}</h1>{body_html}</body></html>").encode()
    headers = [*PAGE_HEADERS, (b"content-length", str(len(page)).encode()), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": page})


async def send_error_page(send: Send, text: str, status: int = 400) -> None:
    await send_page(send, status, "Sign-in failed", f"<p>{html.escape(text)}</p>")


async def send_unavailable(send: Send) -> None:
    await send_json(send, 503, {"error": "temporarily_unavailable", "error_description": "Try again later"},
                    [(b"retry-after", b"5"), *NO_STORE])


def with_cors(send: Send) -> Send:
    """`send` with `Access-Control-Allow-Origin: *` added to the answer unless it has one."""
    async def sending(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", ()))
            if not any(k == b"access-control-allow-origin" for k, _ in headers):
                headers.append((b"access-control-allow-origin", b"*"))
            message = {**message, "headers": headers}
        await send(message)

    return sending


def with_query(url: str, params: Mapping[str, str | None]) -> str:
    """`url` with `params` added to its query (None values left out), fragment-free."""
    parts = urlsplit(url)
    extra = urlencode({k: v for k, v in params.items() if v is not None})
    query = f"{parts.query}&{extra}" if parts.query else extra
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def client_ip(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "?"
