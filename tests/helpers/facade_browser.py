"""The facade's live tests' shared parts: a facade app served by `rondo run` on loopback
(`facade_served`), the user's browser as an `OAuth` announce hook (`Browser`: approves the
consent page, goes through the provider's automated sign-in, lands on the loopback redirect),
and `approve`, which stops at the client's redirect URI (returned, not visited)."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.helpers.loopback import free_port
from tests.helpers.processes import end

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / ".cache" / "node" / "node_modules" / "node" / "bin" / "node"
TS_STEPS = [
    "ok - sign-in through the facade: 401 -> PRM -> AS metadata -> DCR -> consent -> provider -> token\n",
    "ok - a tool reads the provider identity\n",
    "ok - MRTR round\n",
    "ok - refresh on 401 with rotation\n",
    "ok - refused after revocation (the refresh answers invalid_grant)\n"]


@contextmanager
def facade_served(app: str, env: dict[str, str], port: int | None = None) -> Iterator[str]:
    """`rondo run APP --http 127.0.0.1:PORT` with `env` added (FACADE_ISSUER is set to the
    issuer); yields the issuer URL once its AS metadata answers, stopped after. Its stderr goes
    to a file (a pipe nobody reads would stall a chatty server) and is shown if it never starts."""
    port = port or free_port()
    issuer = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen([sys.executable, "-m", "rondo", "run", app,
                                 "--http", f"127.0.0.1:{port}"], cwd=ROOT,
                                env={**os.environ, "PYTHONPATH": str(ROOT), **env,
                                     "FACADE_ISSUER": issuer},
                                stdout=subprocess.DEVNULL, stderr=errors)
        try:
            deadline = time.monotonic() + 20
            while True:
                try:
                    if httpx.get(issuer + "/.well-known/oauth-authorization-server").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline or proc.poll() is not None:
                    errors.seek(0)
                    raise AssertionError(f"{app} did not start: {errors.read().decode(errors='replace')}")
                time.sleep(0.1)
            yield issuer
        finally:
            end(proc)


class Browser:
    """The user's browser: opens the announced /authorize URL, approves (or denies) the
    facade's consent page, goes through the provider's (automated) sign-in, lands on the
    loopback redirect. `errors` holds what went wrong, for the test to assert empty."""

    def __init__(self, approve: bool = True) -> None:
        self.approve = approve
        self.visits: list[str] = []
        self.consent_pages = 0
        self.errors: list[BaseException] = []
        self.http = httpx.Client(timeout=15)  # one cookie jar, as a browser has

    def __call__(self, url: str) -> None:
        self.visits.append(url)
        threading.Thread(target=self._visit, args=(url,), daemon=True).start()

    def _visit(self, url: str) -> None:
        try:
            page = self.http.get(url, follow_redirects=True)
            if "Allow access?" in page.text:
                self.consent_pages += 1
                fields = {k: html.unescape(v) for k, v in
                          re.findall(r'name="(request|csrf)" value="([^"]+)"', page.text)}
                action = html.unescape(re.search(r'action="([^"]+)"', page.text).group(1))  # type: ignore[union-attr]
                self.http.post(str(page.url.join(action)), follow_redirects=True,
                               data={**fields, "decision": "approve" if self.approve else "deny"})
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.errors.append(exc)


def approve(http: httpx.Client, url: str, stop_at: str) -> str:
    page = http.get(url)
    assert page.status_code == 200 and "Allow access?" in page.text, page.text
    fields = {k: html.unescape(v) for k, v in re.findall(r'name="(request|csrf)" value="([^"]+)"', page.text)}
    action = html.unescape(re.search(r'action="([^"]+)"', page.text).group(1))  # type: ignore[union-attr]
    response = http.post(str(page.url.join(action)), data={**fields, "decision": "approve"})
    for _hop in range(20):
        assert response.status_code in (302, 303), (str(response.url), response.text)
        location = str(response.url.join(response.headers["location"]))
        if location.startswith(stop_at):
            return location
        response = http.get(location)
    raise AssertionError("too many redirects")


def run_ts_check(url: str) -> tuple[int, list[str]]:
    """interop/ts_facade_check.mjs against `url`, this module playing the browser; returns its
    exit code and output lines."""
    assert (ROOT / "interop" / "node_modules" / "@modelcontextprotocol" / "client").is_dir(), \
        "the interop peers are not installed: bash scripts/setup.sh"
    proc = subprocess.Popen([str(NODE) if NODE.exists() else "node", "ts_facade_check.mjs", url],
                            cwd=ROOT / "interop", stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    output: list[str] = []
    try:
        assert proc.stdin is not None and proc.stdout is not None
        with httpx.Client(timeout=15) as http:
            for line in proc.stdout:
                output.append(line)
                if line.startswith("AUTHORIZE "):
                    back = approve(http, line.split(" ", 1)[1].strip(), "http://127.0.0.1:9/callback")
                    proc.stdin.write(f"CALLBACK {back}\n")
                    proc.stdin.flush()
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, output
