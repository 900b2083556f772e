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

from tests.helpers.components import binary, missing

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1].parent
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
        lines: list[str] = []
        found = None
        while found is None and len(lines) < 50:  # a stdio server's own stderr comes first
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            found = re.search(r"rondo dev: .* at (http://127\.0\.0\.1:\d+/#secret=\S+)", line)
        assert found, "".join(lines)
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


def test_a_task_with_a_question_before_and_one_inside_it_and_one_cancelled() -> None:
    seen = _drive(str(ROOT / "examples" / "deploy.py"), "deploy")
    assert seen["before"] == "Deploy to which environment?"
    assert seen["during"] == "New version is warm. Switch traffic over?"
    assert seen["defaultChecked"] is True  # the form offered the schema's default
    assert seen["deploy"] == "api is warm on staging; traffic not switched."
    statuses = " | ".join(seen["timeline"])
    assert "working: deploying api to staging" in statuses and " input_required" in statuses
    assert " completed" in statuses
    assert seen["finishedTask"].startswith("completed")
    assert seen["runningTasks"] == 1  # only the unfinished task offers Cancel
    assert "TaskWasCancelled" in seen["cancelled"] and "cancelled" in seen["cancelled"]


def test_sampling_roots_and_progress_in_the_page(tmp_path: Path) -> None:
    from tests.cli.test_cli_dev import ASKING_APP

    app = tmp_path / "asking.py"
    app.write_text(ASKING_APP)
    seen = _drive(str(app), "asking")
    assert seen["sampleShown"] == "user: A haiku about rain"
    assert seen["haiku"] == "soft rain on the roof"
    assert seen["folders"] == "file:///work/a, file:///work/b"
    assert seen["rootsAgain"] == "file:///work/a\nfile:///work/b"
    assert seen["nestedRequired"] == "Needs required."
    assert seen["booked"] == "Oslo for 3 nights"
    assert seen["steps"] == "3 steps"
    lines = " | ".join(seen["timeline"])
    assert "progress 1/3 step 1" in lines and "progress 3/3 step 3" in lines
    assert "[info] steps: counting" in lines


def test_the_official_reference_server_through_its_elicitation_and_sampling_tools() -> None:
    # server-everything (pinned in tests/peers/browser) speaks 2025-11-25 over stdio: the page
    # reaches it through the client's handshake era, questions arriving as server requests.
    everything = PEER / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    if not everything.is_file():
        missing("server-everything (tests/peers/browser/node_modules)", "npm ci in tests/peers/browser")
    node = shutil.which("node") or "node"
    seen = _drive(f"{node} {everything} stdio", "everything")
    assert seen["serverName"] == "mcp-servers/everything"
    assert "file:///work/project" in seen["rootsListed"]
    assert seen["formMessage"] == "Please provide inputs for the following fields:"
    assert seen["emailRefused"] == "Needs an email address."
    assert "User provided the requested information!" in seen["elicited"]
    assert "- Name: Ada Lovelace" in seen["elicited"] and "- Email: ada@example.com" in seen["elicited"]
    raw = "".join(seen["elicited"].split())  # the server's echo of what the form sent
    assert '"untitledMultipleSelectEnum":["Guitar","Piano"]' in raw  # the default kept, one added
    assert '"titledSingleSelectEnum":"hero-3"' in raw and '"integer":42' in raw
    assert seen["embedded"].startswith("Resource 1: This is a plaintext resource")
    assert seen["images"] == 1  # get-tiny-image answers with one image block
    assert "Say hello" in seen["sampleShown"]
    assert "hello from a person" in seen["sampled"]


def test_the_page_follows_a_server_file_that_changes(tmp_path: Path) -> None:
    chromium = binary("chromium", "chromium")
    node = shutil.which("node")
    if node is None or not (PEER / "node_modules" / "playwright-core").is_dir():
        missing("playwright-core (tests/peers/browser/node_modules)", "npm ci in tests/peers/browser")
    assert node is not None
    app = tmp_path / "growing.py"
    app.write_text("import rondo\nserver = rondo.Server('growing', state=None)\n\n\n"
                   "@server.tool\ndef one() -> str:\n    '''One.'''\n    return '1'\n")
    proc = subprocess.Popen([sys.executable, "-m", "rondo", "dev", str(app), "--no-browser"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        found = re.search(r"at (http://127\.0\.0\.1:\d+/#secret=\S+)", proc.stderr.readline())
        assert found
        SHOTS.mkdir(parents=True, exist_ok=True)
        driver = subprocess.Popen([node, str(PEER / "dev_flow.mjs"), found.group(1), str(SHOTS),
                                   chromium, "reload"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, cwd=PEER)
        assert driver.stdout is not None
        assert driver.stdout.readline().strip() == "READY"  # the page is up with the old file
        app.write_text(app.read_text() + "\n\n@server.tool\ndef added() -> str:\n"
                       "    '''Added while the page was open.'''\n    return 'new tool'\n")
        out, err = driver.communicate(timeout=60)
        assert driver.returncode == 0, err[-3000:]
        seen = json.loads(out.strip().splitlines()[-1])
    finally:
        proc.terminate()
        proc.wait(10)
    assert seen["reloadNote"].endswith("reloaded growing")
    assert seen["added"] == "new tool"
