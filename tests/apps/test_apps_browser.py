"""A view made by `rondo.apps.page()` in a real browser: Debian's Chromium, headless, driven by
the pinned playwright-core (tests/peers/browser), behind a small host page that talks to a real
rondo server (tests/helpers/apps_server.py over HTTP) through the official TypeScript client.
The view runs sandboxed under the policy `ViewMeta.policy()` builds from its metadata. Twice: on
rondo's own wiring, and on the official ext-apps `App` (`page(sdk=...)`). Screenshots land in
results/browser/apps-page-*.png."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rondo.apps.client import AppsClient, tool_view
from tests.helpers.components import binary, missing
from tests.helpers.processes import end

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "results" / "browser"
SDK_FILE = (ROOT / "interop" / "node_modules" / "@modelcontextprotocol" / "ext-apps" / "dist" / "src"
            / "app-with-deps.js")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve_sdk() -> tuple[ThreadingHTTPServer, list[str]]:
    """The pinned ext-apps app bundle over loopback HTTP (what a CDN would serve), with the CORS
    header a module import from a sandboxed (opaque-origin) frame needs; the paths asked for."""
    body = SDK_FILE.read_bytes()
    fetched: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            fetched.append(self.path)
            self.send_response(200)
            self.send_header("content-type", "text/javascript")
            self.send_header("access-control-allow-origin", "*")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, fetched


def _wait(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the apps server exited"
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the apps server did not start")


@pytest.mark.parametrize("tool", ["stock", "stock_official"])
def test_a_page_view_renders_its_result_and_its_button_runs_an_input_round(tool: str) -> None:
    chromium = binary("chromium", "chromium")
    node = shutil.which("node")
    for needed in ("tests/peers/browser/node_modules/playwright-core",
                   "interop/node_modules/@modelcontextprotocol/client",
                   "interop/node_modules/@modelcontextprotocol/ext-apps"):
        if node is None or not (ROOT / needed).is_dir():
            missing(needed, "bash scripts/setup.sh")
    assert node is not None
    SHOTS.mkdir(parents=True, exist_ok=True)
    port = _port()
    url = f"http://127.0.0.1:{port}/mcp"
    cdn, fetched = _serve_sdk()
    sdk_origin = f"http://127.0.0.1:{cdn.server_address[1]}"
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests/helpers/apps_server.py"), "--port",
                             str(port)], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT),
                                 "APPS_TEST_SDK_ORIGIN": sdk_origin},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait(url, proc)

        async def policy() -> str:
            import rondo

            async with rondo.Client(url, extensions=[AppsClient()]) as host:
                linked = await tool_view(host, tool)
                assert linked is not None
                return linked.meta.policy()

        csp = asyncio.run(policy())
        shot = SHOTS / f"apps-page-{tool}.png"
        done = subprocess.run([node, str(Path(__file__).with_name("page_in_chromium.mjs")), url,
                               chromium, csp, tool, str(shot)],
                              capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert done.returncode == 0, done.stderr[-3000:]
        seen = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        end(proc, 10)
        cdn.shutdown()
        cdn.server_close()
    assert seen["input"] == '{"shelf":"B"}'
    assert seen["rows"] == [["item", "count", "shelf"], ["tea", "3", "B"], ["coffee", "0", "B"]]
    assert seen["asked"] == ["How many tea?"]  # the host showed the tool's question
    assert seen["out"] == "restocked 7 tea"  # the view got the final result of its call
    assert seen["hostSaw"][:2] == ["ui/initialize", "ui/notifications/initialized"]
    assert "tools/call" in seen["hostSaw"]
    assert not [note for note in seen["hostSaw"] if note.startswith("console:")]
    assert seen["sizes"] and all(s["width"] > 0 and s["height"] > 0 for s in seen["sizes"])
    assert shot.stat().st_size > 1000
    # rondo's wiring loads nothing; the official App comes from the origin the view declares.
    assert fetched == ([] if tool == "stock" else ["/ext-apps@2.0.4/app-with-deps.js"])
