"""The README demo: its state-key note says what it means and how to silence it, and it ends by
showing commands that really run the flows at a terminal."""

from __future__ import annotations

import logging
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import rondo

ROOT = Path(__file__).resolve().parents[1].parent


def test_the_state_key_note_explains_and_can_be_silenced(caplog: pytest.LogCaptureFixture) -> None:
    server = rondo.Server("note")  # no RONDO_STATE_KEYS in the test environment
    assert server.state_policy is not None and server.state_policy.ephemeral
    with caplog.at_level(logging.WARNING):
        server.asgi()
    (record,) = [r for r in caplog.records if r.name == "rondo.http.state_key"]
    text = record.getMessage()
    assert "Fine for one process" in text and "set RONDO_STATE_KEYS" in text
    assert 'logging.getLogger("rondo.http.state_key").disabled = True' in text
    caplog.clear()
    logging.getLogger("rondo.http.state_key").disabled = True
    try:
        server.asgi()
    finally:
        logging.getLogger("rondo.http.state_key").disabled = False
    assert not [r for r in caplog.records if r.name == "rondo.http.state_key"]


@pytest.mark.slow
def test_demo_ends_with_commands_that_work() -> None:
    done = subprocess.run([sys.executable, "examples/preferences.py"], cwd=ROOT, capture_output=True,
                          text=True, timeout=90, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert "sealed with a key made at start-up" in done.stderr
    hint = done.stdout.split("Now answer the questions yourself", 1)[1]
    commands = [line.strip().split("   #")[0] for line in hint.splitlines() if " call " in line]
    stdio = [c for c in commands if "--stdio" in c]
    assert len(stdio) == 2 and any("http://127.0.0.1:8000/mcp" in c for c in commands)
    # Play the user on each stdio command: pick colour 2 (green), then size 1 (small).
    listing = subprocess.run(shlex.split(stdio[0]), cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0, listing.stderr
    assert "favorite_color" in listing.stdout and "profile" in listing.stdout
    called = subprocess.run(shlex.split(stdio[1]), cwd=ROOT, input="2\n1\n", capture_output=True,
                            text=True, timeout=60)
    assert called.returncode == 0, called.stderr
    assert called.stdout.strip() == "you: color green, size small."
