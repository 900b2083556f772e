"""`LoopbackRedirect`, the terminal's sign-in listener on 127.0.0.1: the same port for every
sign-in, a port it cannot have, broken or oversized requests on it, the browser it opens only
where there is a display."""

from __future__ import annotations

import asyncio
import errno
import socket
import sys
import threading
import webbrowser
from collections.abc import Callable

import httpx
import pytest

from rondo.client import LoopbackRedirect
from rondo.client.auth import redirect as redirect_module
from rondo.client.auth.errors import AuthorizationDenied

pytestmark = pytest.mark.slow  # listens on loopback ports

AUTHORIZE = "https://as.example/authorize?client_id=c"


def port_of(uri: str) -> int:
    return int(uri.split(":")[2].split("/")[0])


def later(action: Callable[[], object]) -> None:
    """Run `action` in a thread (the listener runs on the event loop that called announce)."""
    threading.Thread(target=action, daemon=True).start()


def come_back(redirect: LoopbackRedirect, query: str) -> Callable[[str], None]:
    """An `announce` that plays the browser: it lands on the redirect URI with `query`."""
    def announce(url: str) -> None:
        assert url == AUTHORIZE
        later(lambda: httpx.get(f"{redirect.redirect_uri}?{query}", timeout=5))
    return announce


def test_every_sign_in_listens_on_the_same_port_and_returns_the_callback() -> None:
    redirect = LoopbackRedirect(open_browser=False, timeout=10)
    uri = redirect.redirect_uri
    assert uri.startswith("http://127.0.0.1:") and uri.endswith("/callback")
    redirect.announce = come_back(redirect, "code=one&state=s1")
    assert asyncio.run(redirect.authorize(AUTHORIZE)) == f"{uri}?code=one&state=s1"
    # The first sign-in closed its listener; the second binds the same port again (the
    # registered redirect URI must stay valid).
    redirect.announce = come_back(redirect, "code=two&state=s2")
    assert asyncio.run(redirect.authorize(AUTHORIZE)) == f"{uri}?code=two&state=s2"
    assert redirect.redirect_uri == uri


def test_a_port_in_use_is_an_error_at_bind_and_a_denial_at_a_later_sign_in() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        busy = taken.getsockname()[1]
        with pytest.raises(OSError, match="[Aa]ddress already in use") as taken_error:
            LoopbackRedirect(port=busy, open_browser=False).redirect_uri  # noqa: B018
        assert taken_error.value.errno == errno.EADDRINUSE

    redirect = LoopbackRedirect(open_browser=False, timeout=10)
    redirect.announce = come_back(redirect, "code=one&state=s")
    asyncio.run(redirect.authorize(AUTHORIZE))
    # Something else took the port between two sign-ins.
    with (socket.create_server(("127.0.0.1", port_of(redirect.redirect_uri))),
          pytest.raises(AuthorizationDenied, match="cannot listen on .* again")):
        asyncio.run(redirect.authorize(AUTHORIZE))


def test_close_releases_the_port() -> None:
    redirect = LoopbackRedirect(open_browser=False)
    port = port_of(redirect.redirect_uri)
    redirect.close()
    redirect.close()  # twice is fine
    with socket.create_server(("127.0.0.1", port)):
        pass  # free again


def test_broken_and_oversized_requests_are_dropped_and_the_real_callback_still_lands() -> None:
    redirect = LoopbackRedirect(open_browser=False, timeout=10)
    port = port_of(redirect.redirect_uri)
    replies: list[bytes] = []

    def strays_then_the_browser(url: str) -> None:
        def go() -> None:
            with socket.create_connection(("127.0.0.1", port)) as sock:
                sock.sendall(b"GET /callback?code=half HTTP/1.1\r\nHost: x")  # never ends
            with socket.create_connection(("127.0.0.1", port)) as sock:
                sock.sendall(b"GET /callback?code=big HTTP/1.1\r\nX: " + b"a" * 20_000 + b"\r\n\r\n")
                sock.settimeout(5)
                replies.append(sock.recv(100))  # closed without an answer: b""
            with socket.create_connection(("127.0.0.1", port)) as sock:
                sock.sendall(b"POST /callback?code=post HTTP/1.1\r\n\r\n")
                sock.settimeout(5)
                replies.append(sock.recv(100))
            httpx.get(f"{redirect.redirect_uri}?code=real&state=s", timeout=5)
        later(go)

    redirect.announce = strays_then_the_browser
    assert asyncio.run(redirect.authorize(AUTHORIZE)).endswith("?code=real&state=s")
    assert replies[0] == b""
    assert replies[1].startswith(b"HTTP/1.1 404 Not Found")


def test_the_browser_opens_only_where_there_is_a_display(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    redirect = LoopbackRedirect(timeout=10)

    def browser(url: str) -> bool:  # webbrowser.open, run in a thread by the listener
        opened.append(url)
        httpx.get(f"{redirect.redirect_uri}?code=b&state=s", timeout=5)
        return True

    announced: list[str] = []
    redirect.announce = announced.append
    monkeypatch.setattr(webbrowser, "open", browser)
    monkeypatch.setenv("DISPLAY", ":0")
    assert asyncio.run(redirect.authorize(AUTHORIZE)).endswith("?code=b&state=s")
    assert opened == [AUTHORIZE] and announced == [AUTHORIZE]  # printed as well, always

    monkeypatch.delenv("DISPLAY")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert not redirect_module._has_display()
    opened.clear()
    redirect.announce = come_back(redirect, "code=t&state=s")
    assert asyncio.run(redirect.authorize(AUTHORIZE)).endswith("?code=t&state=s")
    assert opened == []  # a terminal without a display: no browser (a text one would take over)
    monkeypatch.setattr(sys, "platform", "darwin")
    assert redirect_module._has_display()


def test_the_default_announcement_prints_the_url_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    LoopbackRedirect().announce(AUTHORIZE)
    captured = capsys.readouterr()
    assert AUTHORIZE in captured.err and captured.out == ""
