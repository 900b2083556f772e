"""`rondo dev URL` on a protected server signs in as `rondo call` does: the sign-in URL is
printed, the (scripted) user opens it, the redirect is caught on loopback, and the page's
calls carry the token; the next run reuses the stored token without asking."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.helpers.auth_live import protected_world

pytestmark = pytest.mark.slow


def _lines_until(proc: subprocess.Popen[str], pattern: str, seen: list[str]) -> re.Match[str]:
    assert proc.stderr is not None
    while len(seen) < 200:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        found = re.search(pattern, line)
        if found:
            return found
    raise AssertionError("".join(seen))


def _offer_and_whoami(page: str, secret: str) -> tuple[str, str]:
    headers = {"x-rondo-dev-secret": secret}
    offer = httpx.post(page + "api/offer", json={}, headers=headers, timeout=20).json()
    called = httpx.post(page + "api/call", json={"name": "whoami", "arguments": {}},
                        headers=headers, timeout=20).json()
    return offer["server"]["name"], called["content"][0]["text"]


def test_sign_in_then_the_stored_token_next_time(tmp_path: Path) -> None:
    store = tmp_path / "tokens.json"
    with protected_world() as url:
        for run in (1, 2):
            proc = subprocess.Popen([sys.executable, "-m", "rondo", "dev", url, "--no-browser",
                                     "--token-store", str(store)], stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            seen: list[str] = []
            try:
                if run == 1:
                    link = _lines_until(proc, r"(http://\S+/authorize\?\S+)", seen).group(1)
                    # The user opens it; the test AS approves at once and redirects to loopback.
                    httpx.get(link, follow_redirects=True, timeout=20)
                found = _lines_until(proc, r"rondo dev: \S+ at (http://127\.0\.0\.1:\d+/)#secret=(\S+)", seen)
                name, who = _offer_and_whoami(found.group(1), found.group(2))
            finally:
                proc.terminate()
                proc.wait(10)
            assert who == "sub=johndoe" and name
            if run == 2:
                assert not any("/authorize?" in line for line in seen)  # no second sign-in
    assert store.stat().st_mode & 0o777 == 0o600
