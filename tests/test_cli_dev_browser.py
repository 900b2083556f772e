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
from typing import Any

import pytest

from components import binary, missing

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
PEER = ROOT / "tests" / "peers" / "browser"


SHOTS = ROOT / "results" / "browser"


def _drive(target: str, scenario: str) -> dict[str, Any]:
    """Start `rondo dev TARGET`, run the scenario of dev_flow.mjs in Chromium, return what the
    page showed."""
    chromium = binary("chromium", "chromium")
    node = shutil.which("node")
    if node is None or not (PEER / "node_modules" / "playwright-core").is_dir():
        missing("playwright-core (tests/peers/browser/node_modules)", "npm ci in tests/peers/browser")
    assert node is not None
    SHOTS.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "rondo", "dev", target, "--no-browser"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"at (http://127\.0\.0\.1:\d+/#secret=\S+)", line)
        assert found, line
        done = subprocess.run([node, str(PEER / "dev_flow.mjs"), found.group(1), str(SHOTS),
                               chromium, scenario],
                              capture_output=True, text=True, timeout=120, cwd=PEER)
        assert done.returncode == 0, done.stderr[-3000:]
        seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return seen
    finally:
        proc.terminate()
        proc.wait(10)


def test_every_flow_of_the_example_by_clicking_in_chromium() -> None:
    shots = SHOTS
    seen = _drive(str(ROOT / "examples" / "preferences.py"), "preferences")
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


def test_a_task_with_a_question_before_and_one_inside_it() -> None:
    seen = _drive(str(ROOT / "examples" / "deploy.py"), "deploy")
    assert seen["before"] == "Deploy to which environment?"
    assert seen["during"] == "New version is warm. Switch traffic over?"
    assert seen["defaultChecked"] is True  # the form offered the schema's default
    assert seen["deploy"] == "api is warm on staging; traffic not switched."
    statuses = " | ".join(seen["timeline"])
    assert "working: deploying api to staging" in statuses and " input_required" in statuses
    assert " completed" in statuses


def test_sampling_roots_and_progress_in_the_page(tmp_path: Path) -> None:
    from test_cli_dev import ASKING_APP

    app = tmp_path / "asking.py"
    app.write_text(ASKING_APP)
    seen = _drive(str(app), "asking")
    assert seen["sampleShown"] == "user: A haiku about rain"
    assert seen["haiku"] == "soft rain on the roof"
    assert seen["folders"] == "file:///work/a, file:///work/b"
    assert seen["rootsAgain"] == "file:///work/a\nfile:///work/b"
    assert seen["steps"] == "3 steps"
    lines = " | ".join(seen["timeline"])
    assert "progress 1/3 step 1" in lines and "progress 3/3 step 3" in lines
    assert "[info] steps: counting" in lines
