"""`rondo dev` in a real browser: Debian's Chromium, headless, driven by the pinned
playwright-core (tests/peers/browser) by clicking and typing only, through every interactive
flow of examples/preferences.py. Screenshots land in results/browser/."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from components import binary, missing

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
PEER = ROOT / "tests" / "peers" / "browser"


def test_every_flow_of_the_example_by_clicking_in_chromium() -> None:
    chromium = binary("chromium", "chromium")
    node = shutil.which("node")
    if node is None or not (PEER / "node_modules" / "playwright-core").is_dir():
        missing("playwright-core (tests/peers/browser/node_modules)", "npm ci in tests/peers/browser")
    assert node is not None
    shots = ROOT / "results" / "browser"
    shots.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "rondo", "dev",
                             str(ROOT / "examples" / "preferences.py"), "--no-browser"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"at (http://127\.0\.0\.1:\d+/#secret=\S+)", line)
        assert found, line
        done = subprocess.run([node, str(PEER / "dev_flow.mjs"), found.group(1), str(shots), chromium],
                              capture_output=True, text=True, timeout=120, cwd=PEER)
        assert done.returncode == 0, done.stderr[-3000:]
        seen = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        proc.terminate()
        proc.wait(10)
    assert "#secret" not in seen["addressBar"]  # the page took the secret out of the address bar
    assert seen["firstQuestion"] == "Which color do you like, ann?"
    assert seen["favorite"] == "ann likes green."
    assert seen["secondQuestion"] == "Which size do you wear?"
    assert seen["profile"] == "bo: color blue, size large."
    assert seen["consentUrl"] == "https://calendar.example.com/connect?user=cy"
    assert seen["calendar"] == "Calendar connected for cy."
    assert seen["resource"] == "di likes red."
    assert seen["prompt"] == "user: Write a short poem for ed."
    assert seen["required"] == "Needs required."
    assert seen["timeline"] >= 15
    for name in ("dev-form-question.png", "dev-url-consent.png", "dev-done.png"):
        assert (shots / name).stat().st_size > 5000
