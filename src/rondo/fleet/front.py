"""The ASGI front `rondo run` puts before the MCP endpoint: what a deployment needs around it.

- `GET /healthz`: 200 `ok` while the worker serves (no Host check: probes use pod IPs).
- `GET /.well-known/rondo/keys`: this worker's key ids and fingerprints (`keyinfo.py`), only to
  a loopback client with no forwarding header, so nothing behind a proxy reaches it.
- Host and Origin allow-lists (DNS-rebinding and cross-site protection), 403 otherwise.
- `Rondo-Worker: <id>` on every response when the worker has an id (`--worker-id`), so an
  operator (or a test) sees which worker answered behind the balancer.
- `root_path`: uvicorn puts the proxy prefix in front of `path`; the endpoint matches without it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import msgspec

from ..transport.http.inbound import LOOPBACK_HOSTS, hostname, origin_hostname, shown
from ..wire.errors import INVALID_REQUEST
from .keyinfo import REPORT_PATH, key_report

if TYPE_CHECKING:
    from ..server.server import Server

_FORWARDED = (b"x-forwarded-for", b"forwarded", b"x-real-ip")
_LOOPBACK_CLIENTS = ("127.0.0.1", "::1", "localhost")
_VERDICTS = 256  # (Host, Origin) pairs judged and kept
_UNSEEN: Any = object()


def normalize_origin(origin: str) -> str:
    """`Scheme://host[:port]`, lower-cased, without a trailing slash (how browsers send it)."""
    value = origin.strip().lower().rstrip("/")
    scheme, sep, rest = value.partition("://")
    if not sep or scheme not in ("http", "https") or not rest or "/" in rest:
        raise ValueError(f"an allowed origin looks like https://host[:port], got {origin!r}")
    return value


class Front:
    def __init__(
        self,
        app: Any,
        server: Server,
        *,
        allowed_hosts: Iterable[str] | None = LOOPBACK_HOSTS,
        allowed_origins: Iterable[str] | None = None,
        worker: str | None = None,
    ) -> None:
        self.app = app
        self.server = server
        self.worker = worker
        self._worker_header = (b"rondo-worker", worker.encode("ascii")) if worker else None
        hosts = None if allowed_hosts is None else [h for h in allowed_hosts]
        self.allowed_hosts = (
            None if hosts is None or "*" in hosts else frozenset(hostname(h) for h in hosts)
        )
        self._verdicts: dict[tuple[bytes | None, bytes | None], str | None] = {}
        origins = None if allowed_origins is None else list(allowed_origins)
        self.allowed_origins = (
            None if origins is None else
            ("*" if "*" in origins else frozenset(normalize_origin(o) for o in origins))
        )

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        tag = self._worker_header
        if tag is not None:
            send = _tagged(send, tag)
        root = scope.get("root_path") or ""
        path = scope.get("path", "")
        if root and path.startswith(root):
            path = path[len(root):] or "/"
            scope = {**scope, "path": path}
        if scope["method"] == "GET" and path == "/healthz":
            await _reply(send, 200, b"ok", b"text/plain; charset=utf-8")
            return
        # uvicorn (what `rondo run` serves with) gives header names in lower case: one dict
        # made in C, the last of a repeated header kept.
        headers: dict[bytes, bytes] = dict(scope["headers"])
        if path == REPORT_PATH:
            if scope["method"] == "GET" and _local(scope, headers):
                body = msgspec.json.encode(key_report(self.server, self.worker))
                await _reply(send, 200, body, b"application/json")
            else:
                await _reply(send, 404, b"Not Found", b"text/plain; charset=utf-8")
            return
        seen = (headers.get(b"host"), headers.get(b"origin"))
        refused = self._verdicts.get(seen, _UNSEEN)
        if refused is _UNSEEN:
            refused = self._refusal(*seen)
            if len(self._verdicts) >= _VERDICTS:  # bounded: a client picks these values
                self._verdicts.clear()
            self._verdicts[seen] = refused
        if refused is not None:
            body = msgspec.json.encode({"jsonrpc": "2.0", "error": {
                "code": INVALID_REQUEST, "message": refused}})
            await _reply(send, 403, body, b"application/json")
            return
        await self.app(scope, receive, send)

    def _refusal(self, host: bytes | None, origin: bytes | None) -> str | None:
        """None when the request's Host and Origin are allowed, else the 403's message: what
        was refused and the flag that allows it. (Each pair is judged once: `_verdicts`.)"""
        hosts = self.allowed_hosts
        if hosts is not None:
            if not host:
                return "Forbidden: the request has no Host header"
            if hostname(host.decode("latin-1")) not in hosts:
                return (f"Forbidden: Host {shown(host)} is not allowed; serve it with "
                        "rondo run --allowed-hosts NAME[,NAME...]")
        if origin is None:
            return None
        value = origin.decode("latin-1").strip().lower().rstrip("/")
        if self.allowed_origins == "*":
            return None
        if self.allowed_origins is not None:
            ok = value in self.allowed_origins
            flag = "--allowed-origins"
        elif hosts is None:
            return None
        else:
            ok = origin_hostname(value) in hosts  # the endpoint's own rule
            flag = "--allowed-origins (or --allowed-hosts)"
        if ok:
            return None
        return f"Forbidden: Origin {shown(origin)} is not allowed; allow it with rondo run {flag}"


def _tagged(send: Any, header: tuple[bytes, bytes]) -> Any:
    async def tagged(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), header]}
        await send(message)

    return tagged


def _local(scope: dict[str, Any], headers: dict[bytes, bytes]) -> bool:
    client = scope.get("client")
    if not client or client[0] not in _LOOPBACK_CLIENTS and not str(client[0]).startswith("127."):
        return False
    return not any(name in headers for name in _FORWARDED)


async def _reply(send: Any, status: int, body: bytes, content_type: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", content_type), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
