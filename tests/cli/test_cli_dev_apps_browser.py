"""MCP Apps in a real browser: `rondo dev` hosts a tool's view through the official ext-apps
host bridge (`AppBridge`, tests/peers/apps), and the view runs the official view script (`App`),
in Debian's headless Chromium driven by the pinned playwright-core (tests/peers/browser). On the
rendered page: the view gets the tool's input and result, a button in it calls a tool only views
see, a call it starts that needs the user's answer shows the question on the page, the answer
typed there reaches the server, and the view shows the final result; on both protocol eras.
Screenshots land in results/browser/ (their paths are printed)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.components import binary, missing
from tests.helpers.processes import Drained, end

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1].parent
BROWSER = ROOT / "tests" / "peers" / "browser"
APPS = ROOT / "tests" / "peers" / "apps" / "dist"
SHOTS = ROOT / "results" / "browser"
SERVER = ROOT / "tests" / "helpers" / "apps_view_server.py"


def _drive(name: str, *extra: str) -> dict[str, Any]:
    chromium = binary("chromium", "chromium")
    node = shutil.which("node")
    if node is None or not (BROWSER / "node_modules" / "playwright-core").is_dir():
        missing("playwright-core (tests/peers/browser/node_modules)", "npm ci in tests/peers/browser")
    if not (APPS / "ext-apps-host.js").is_file() or not (APPS / "ext-apps-app.js").is_file():
        missing("the ext-apps bundles (tests/peers/apps/dist)", "npm ci && node build.mjs in tests/peers/apps")
    assert node is not None
    SHOTS.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "rondo", "dev", str(SERVER), "--no-browser",
                             "--apps-bridge", str(APPS / "ext-apps-host.js"), *extra],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        stderr = Drained(proc.stderr)  # read for the server's whole life: a full pipe would block it
        first = stderr.next_line(60)
        assert "hosting views with ext-apps 2.0.4" in first, first
        found = re.search(r"at (http://127\.0\.0\.1:\d+/#secret=\S+)", stderr.next_line(60))
        assert found, stderr.lines
        done = subprocess.run([node, str(BROWSER / "apps_flow.mjs"), found.group(1), str(SHOTS),
                               chromium, name], capture_output=True, text=True, timeout=120, cwd=BROWSER)
        assert done.returncode == 0, done.stderr[-3000:]
        seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return seen
    finally:
        end(proc, 10)


@pytest.mark.parametrize(("era", "extra"), [("modern", ()), ("legacy", ("--protocol", "2025-11-25"))])
def test_a_view_in_chromium_gets_its_tool_calls_tools_and_asks_the_user(
        era: str, extra: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    seen = _drive(f"apps-{era}", *extra)
    with capsys.disabled():  # the artifacts' paths, shown in any run
        print(f"\n  screenshots: {seen['screenshot']}, {SHOTS / f'apps-{era}-question.png'}")
    assert seen["era"] == era
    # The page lists only the tool the model may call; the view's own tools are named apart.
    assert seen["cards"] == 1
    assert seen["viewOnly"] == "Only views call: price, place_order"
    # The official App received the tool's input and result through the official AppBridge.
    assert json.loads(seen["input"]) == {"item": "tea", "quantity": 2}
    assert seen["result"] == "2 x tea"
    # A button in the view called a tool only views see, and showed its answer.
    assert seen["price"] == "tea costs 3 coins"
    # A call the view started needed the user's answer: the page showed the question, the
    # answer typed there reached the server, and the view shows the final result.
    assert seen["question"] == "Ship the tea to whom?"
    assert seen["order"] == "tea ships to Ada"
    steps = [re.sub(r"^[\d:]+( [AP]M)? ", "", line) for line in seen["timeline"]]  # time dropped
    order = [steps.index(step) for step in ("view called place_order", "asked: Ship the tea to whom?",
                                            "answered: accept", "view's call of place_order done")]
    assert order == sorted(order), " / ".join(steps)
    # Two frames deep, each sandboxed: the proxy on the other loopback name, the view with an
    # opaque origin; an image from an origin the view did not declare was refused.
    assert seen["pageOrigin"].startswith("http://127.0.0.1:")
    assert seen["proxyOrigin"] == seen["pageOrigin"].replace("127.0.0.1", "localhost")
    assert seen["viewSandbox"] == "allow-scripts allow-forms"
    assert seen["csp"] == "blocked https://undeclared.example.net/pixel.png"
    # Called again: the old view was torn down, one new view shows the new input.
    assert json.loads(seen["again"]) == {"item": "coffee", "quantity": 2}
    assert seen["frames"] == 1
    assert "view ui://orders/view.html torn down" in steps, " / ".join(steps)  # answered
    assert Path(seen["screenshot"]).stat().st_size > 5000
    # From inside the view, the page's document and its API are out of reach.
    assert seen["isolation"] == {"origin": "null", "top": "blocked", "api": "blocked"}
    errors = [line for line in seen["console"]
              if "undeclared.example.net" not in line and "/api/offer" not in line]
    assert errors == []
