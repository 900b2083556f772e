"""How the user's browser gets to the authorization server and back.

A redirect is any object with a `redirect_uri` and `async authorize(url) -> callback_url`: it
sends the user to `url` and returns the full URL the authorization server redirected to
(with `code`, `state` and maybe `iss` in its query). Three are provided:

- `RedirectHandler(redirect_uri, handler)`: the application does it (opens a browser or a web
  view, receives the callback on its own route) in `handler(url)`, sync or async.
- `LoopbackRedirect()`: for scripts and terminals: listens on 127.0.0.1 (RFC 8252 §7.3),
  prints the URL, opens a browser when there is a display, and catches the redirect.
- `HeadlessRedirect(redirect_uri)`: for authorization servers that approve without a user
  (test servers, pre-consented automation): follows the authorization URL itself and reads
  the redirect's `Location`.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import socket
import sys
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, runtime_checkable
from urllib.parse import parse_qs, urlsplit

import httpx

from rondo.client.auth.errors import AuthorizationDenied


@runtime_checkable
class Redirect(Protocol):
    @property
    def redirect_uri(self) -> str: ...

    async def authorize(self, url: str) -> str: ...


class RedirectHandler:
    """Delegates the browser round trip to `handler(authorization_url) -> callback_url`."""

    def __init__(self, redirect_uri: str, handler: Callable[[str], str | Awaitable[str]]) -> None:
        self._redirect_uri = redirect_uri
        self._handler = handler

    @property
    def redirect_uri(self) -> str:
        return self._redirect_uri

    async def authorize(self, url: str) -> str:
        result = self._handler(url)
        if inspect.isawaitable(result):
            result = await result
        if not isinstance(result, str):
            raise AuthorizationDenied("the redirect handler returned no callback URL")
        return result


class HeadlessRedirect:
    """GETs the authorization URL without a browser and returns the redirect's Location.

    Only for authorization servers that decide without user interaction."""

    def __init__(
        self,
        redirect_uri: str = "http://localhost:3000/callback",
        *,
        timeout: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._redirect_uri = redirect_uri
        self.timeout = timeout
        self.transport = transport

    @property
    def redirect_uri(self) -> str:
        return self._redirect_uri

    async def authorize(self, url: str) -> str:
        async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False, transport=self.transport) as http:
            try:
                # Only the status and Location are needed: the body is never read.
                async with http.stream("GET", url) as response:
                    pass
            except httpx.HTTPError as exc:
                raise AuthorizationDenied(f"authorization endpoint unreachable: {type(exc).__name__}") from None
        location = response.headers.get("location")
        if response.status_code not in (301, 302, 303, 307, 308) or not location:
            raise AuthorizationDenied(
                f"authorization endpoint answered HTTP {response.status_code} without a redirect")
        return str(response.url.join(location))


class LoopbackRedirect:
    """Catches the redirect on `http://127.0.0.1:PORT/callback` (PORT 0: any free port).

    `announce(url)` tells the user where to go (default: print to stderr); a browser is
    opened when `open_browser` and there is a display. Waits at most `timeout` seconds."""

    def __init__(
        self,
        *,
        port: int = 0,
        path: str = "/callback",
        open_browser: bool = True,
        timeout: float = 300.0,
        announce: Callable[[str], Any] | None = None,
    ) -> None:
        self.port = port
        self.path = path
        self.open_browser = open_browser
        self.timeout = timeout
        self.announce = announce or _print_url
        self._sock: socket.socket | None = None
        self._uri: str | None = None

    @property
    def redirect_uri(self) -> str:
        """Bound on first use (the port must be known before registration) and kept: later
        sign-ins listen on the same port, so the registered redirect URI stays valid."""
        if self._uri is None:
            self._bind(self.port)
        assert self._uri is not None
        return self._uri

    def _bind(self, port: int) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", port))
            sock.listen(8)
            sock.setblocking(False)
        except OSError:
            sock.close()
            raise
        self._sock = sock
        self._uri = f"http://127.0.0.1:{sock.getsockname()[1]}{self.path}"

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    async def authorize(self, url: str) -> str:
        base = self.redirect_uri
        if self._sock is None:  # an earlier sign-in closed it: listen on the same port again
            try:
                self._bind(int(base.split(":")[2].split("/")[0]))
            except OSError as exc:
                raise AuthorizationDenied(f"cannot listen on {base} again: {exc.strerror}") from None
        loop = asyncio.get_running_loop()
        arrived: asyncio.Future[str] = loop.create_future()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                async with asyncio.timeout(10):
                    head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
                writer.close()
                return
            target = _request_target(head)
            ok = target is not None and urlsplit(target).path == self.path and not arrived.done()
            body = (b"<!doctype html><title>Signed in</title><p>You can close this window."
                    if ok else b"Not found")
            status = b"200 OK" if ok else b"404 Not Found"
            writer.write(b"HTTP/1.1 " + status + b"\r\nContent-Type: text/html; charset=utf-8\r\n"
                         b"Connection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            with contextlib.suppress(ConnectionError):
                await writer.drain()
            writer.close()
            if ok and target is not None:
                arrived.set_result(base.split(self.path, 1)[0] + target)

        assert self._sock is not None
        server = await asyncio.start_server(serve, sock=self._sock, limit=8192)
        self._sock = None  # the server owns it now
        try:
            self.announce(url)
            if self.open_browser and _has_display():
                import webbrowser

                with contextlib.suppress(Exception):
                    await asyncio.to_thread(webbrowser.open, url)
            try:
                async with asyncio.timeout(self.timeout):
                    return await arrived
            except TimeoutError:
                raise AuthorizationDenied(f"no authorization redirect arrived within {self.timeout:g} s") from None
        finally:
            server.close()
            with contextlib.suppress(Exception):
                await server.wait_closed()


def _request_target(head: bytes) -> str | None:
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split(" ")
    if len(parts) != 3 or parts[0] != "GET" or not parts[1].startswith("/"):
        return None
    return parts[1]


def _has_display() -> bool:
    """A graphical browser can plausibly open (text browsers would take over the terminal)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _print_url(url: str) -> None:
    print(f"Sign in by opening this URL in a browser:\n\n  {url}\n", file=sys.stderr, flush=True)


def callback_params(callback_url: str, redirect_uri: str) -> dict[str, str]:
    """The single-valued query parameters of an authorization response; the URL must be the
    redirect URI the request named (same scheme, host, port and path)."""
    got, want = urlsplit(callback_url), urlsplit(redirect_uri)
    if (got.scheme, got.netloc, got.path) != (want.scheme, want.netloc, want.path):
        raise AuthorizationDenied("the authorization response came back to another URL than the redirect URI")
    params: dict[str, str] = {}
    for name, values in parse_qs(got.query, keep_blank_values=True).items():
        if len(values) != 1:
            raise AuthorizationDenied(f"the authorization response repeats {name!r}")
        params[name] = values[0]
    return params
