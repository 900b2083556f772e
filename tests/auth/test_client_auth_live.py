"""rondo.Client signing in for real: the pinned oauth2-mock-server (tests/authserver) as the
authorization server, tests/helpers/protected_server.py as the resource server, the loopback redirect
listener catching the redirect from a scripted "browser"."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from rondo.client import (
    AuthorizationDenied,
    Client,
    FileTokenStore,
    LoopbackRedirect,
    MemoryTokenStore,
    OAuth,
)
from tests.helpers.auth_live import free_port, protected_world

pytestmark = pytest.mark.slow
HERE = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[None, str]]:
    with protected_world() as url:
        yield None, url


class Browser:
    """Stands in for the user: opens the announced URL (the AS approves at once) and follows
    the redirect to the loopback listener, from another thread as a real browser would."""

    def __init__(self) -> None:
        self.visits: list[str] = []

    def __call__(self, url: str) -> None:
        self.visits.append(url)
        threading.Thread(target=lambda: httpx.get(url, follow_redirects=True, timeout=10), daemon=True).start()


def sign_in(browser: Browser, store: Any = None, **kwargs: Any) -> OAuth:
    return OAuth(redirect=LoopbackRedirect(announce=browser, open_browser=False, timeout=20),
                 store=store or MemoryTokenStore(), **kwargs)


def test_sign_in_call_and_mrtr_with_step_up(world: tuple[None, str]) -> None:
    _, url = world
    browser = Browser()
    store = MemoryTokenStore()

    async def flow() -> tuple[str, str]:
        async with Client(url, auth=sign_in(browser, store), on_elicit=lambda r: {"action": "accept", "content": {"title": "T"}}) as client:
            who = (await client.call_tool("whoami", {})).text
            note = (await client.call_tool("write_note", {"text": "hi"})).text  # 403, step-up, MRTR
            return who, note

    who, note = asyncio.run(asyncio.wait_for(flow(), 60))
    assert who == "sub=johndoe" and note == "wrote T: hi"
    assert len(browser.visits) == 2  # the first sign-in and the step-up
    first, second = (httpx.URL(v).params for v in browser.visits)
    assert first["resource"] == url and first["code_challenge_method"] == "S256"
    assert set(second["scope"].split()) >= {"mcp:use", "files:write"}  # the union, not just the new one


def test_refresh_before_expiry_and_on_401(world: tuple[None, str]) -> None:
    _, url = world
    browser = Browser()
    store = MemoryTokenStore()

    async def tokens() -> list[str]:
        seen = []
        auth = sign_in(browser, store)
        async with Client(url, auth=auth) as client:
            await client.call_tool("whoami", {})
            seen.append(await current(store))
            await asyncio.sleep(1.1)  # the AS's JWTs have no jti: a new second, a new token
            auth.refresh_margin = 10_000  # every token now "expires soon": refresh before the call
            await client.call_tool("whoami", {})
            seen.append(await current(store))
            auth.refresh_margin = 60
            httpx.post(url.replace("/mcp", "/_control/forget"))  # the server drops every token
            await asyncio.sleep(1.1)
            await client.call_tool("whoami", {})  # 401, refresh, retry
            seen.append(await current(store))
        return seen

    seen = asyncio.run(asyncio.wait_for(tokens(), 60))
    assert len(set(seen)) == 3 and len(browser.visits) == 1  # two refreshes, one sign-in


def test_second_run_reuses_the_stored_token(world: tuple[None, str], tmp_path: Path) -> None:
    _, url = world
    path = tmp_path / "tokens.json"
    browser = Browser()

    async def once() -> str:
        async with Client(url, auth=sign_in(browser, FileTokenStore(path))) as client:
            return (await client.call_tool("whoami", {})).text

    assert asyncio.run(once()) == "sub=johndoe"
    assert asyncio.run(once()) == "sub=johndoe"
    assert len(browser.visits) == 1


async def current(store: MemoryTokenStore) -> str:
    tokens = [v for k, v in store._data.items() if k.startswith("token ")]
    assert len(tokens) == 1
    return str(tokens[0]["access_token"])


def test_rondo_call_signs_in_in_a_terminal_and_reuses_the_token(world: tuple[None, str], tmp_path: Path) -> None:
    """`rondo call` in a real terminal (tmux): it prints the sign-in URL; the "user" opens it;
    the call completes; the second run needs no sign-in."""
    _, url = world
    sock = f"rondo-auth-{free_port()}"
    store = tmp_path / "tokens.json"
    out = tmp_path / "out.txt"

    def tmux(*args: str) -> str:
        return subprocess.run(["tmux", "-L", sock, *args], check=True, capture_output=True, text=True, timeout=10).stdout

    def run_in_terminal() -> None:
        command = (f"{sys.executable} -m rondo.cli call {url} whoami --token-store {store} --no-browser "
                   f"> {out}; echo exit=$? >> {out}")
        tmux("send-keys", "-t", "t", command, "Enter")

    def wait_for(predicate: Any, what: str, timeout: float = 20) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}; screen:\n{tmux('capture-pane', '-p', '-J', '-t', 't')}")

    def signin_url() -> str | None:
        screen = tmux("capture-pane", "-p", "-J", "-t", "t", "-S", "-200")
        found = [w for w in screen.split() if w.startswith("http") and "/authorize?" in w]
        return found[-1] if found else None

    tmux("new-session", "-d", "-s", "t", "-x", "400", "-y", "50")
    try:
        run_in_terminal()
        link = wait_for(signin_url, "the sign-in URL")
        assert httpx.URL(link).params["redirect_uri"].startswith("http://127.0.0.1:")
        httpx.get(link, follow_redirects=True, timeout=10)  # the user's browser
        wait_for(lambda: out.exists() and "exit=" in out.read_text(), "the first run")
        assert out.read_text().split() == ["sub=johndoe", "exit=0"]
        assert oct(store.stat().st_mode & 0o777) == "0o600"
        tmux("send-keys", "-t", "t", "clear", "Enter")
        wait_for(lambda: "/authorize?" not in tmux("capture-pane", "-p", "-J", "-t", "t"), "the cleared screen")
        tmux("clear-history", "-t", "t")
        assert signin_url() is None
        out.unlink()
        run_in_terminal()
        wait_for(lambda: out.exists() and "exit=" in out.read_text(), "the second run")
        assert out.read_text().split() == ["sub=johndoe", "exit=0"]
        assert signin_url() is None  # no second sign-in
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True, timeout=10)


def test_loopback_listener_ignores_strays_and_gives_up_in_time() -> None:
    seen: list[int] = []

    def stray_then_nothing(url: str) -> None:
        def poke() -> None:
            port = int(redirect.redirect_uri.split(":")[2].split("/")[0])
            with socket.create_connection(("127.0.0.1", port)) as sock:  # garbage: not an HTTP request
                sock.sendall(b"\x00\x01garbage\r\n\r\n")
            seen.append(httpx.get(f"http://127.0.0.1:{port}/favicon.ico").status_code)
        threading.Thread(target=poke, daemon=True).start()

    redirect = LoopbackRedirect(announce=stray_then_nothing, open_browser=False, timeout=1.0)
    assert redirect.redirect_uri.startswith("http://127.0.0.1:")
    with pytest.raises(AuthorizationDenied, match="within 1 s"):  # its own 1 s bound ended it
        asyncio.run(asyncio.wait_for(redirect.authorize("https://as.example/authorize?x=1"), 15))
    assert seen == [404]
