"""The user's browser for the facade's live tests: open an /authorize URL, approve the facade's
consent page, go through the provider's (automated) sign-in and back to the facade's /callback,
and stop at the client's redirect URI (returned, not visited)."""

from __future__ import annotations

import html
import re
import subprocess
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / ".cache" / "node" / "node_modules" / "node" / "bin" / "node"
TS_STEPS = [
    "ok - sign-in through the facade: 401 -> PRM -> AS metadata -> DCR -> consent -> provider -> token\n",
    "ok - a tool reads the provider identity\n",
    "ok - MRTR round\n",
    "ok - refresh on 401 with rotation\n",
    "ok - refused after revocation (the refresh answers invalid_grant)\n"]


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
