"""Ctrl-C at a `rondo call` prompt cancels the call cleanly, on stdio and on HTTP: exit 130 at
once, one line saying so, no traceback from us or the server, and no server left running."""

from __future__ import annotations

import os
import pty
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1].parent
PROMPT = b"color (number or value): "


def interrupt_at_prompt(args: list[str], timeout: float = 30.0, after: float = 10.0) -> tuple[int, str]:
    """Run `rondo call ARGS` on a pseudo-terminal, press Ctrl-C at the first prompt; return
    (exit code, everything shown). Fails if no prompt comes within `timeout` s or the child has
    not exited `after` s past Ctrl-C (a prompt that waits for Enter never would): hang guards,
    polled with select, so a child that hangs cannot hang the test."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: a session leader whose terminal is the pty
        os.chdir(ROOT)
        os.execv(sys.executable, [sys.executable, "-m", "rondo", "call", *args])
    shown = b""
    deadline = time.monotonic() + timeout
    pressed = False
    try:
        while True:
            left = deadline - time.monotonic()
            ready = left > 0 and select.select([fd], [], [], left)[0]
            assert ready, f"no prompt / no exit in time: {shown.decode(errors='replace')}"
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break  # the child closed the terminal: it exited
            if not chunk:
                break
            shown += chunk
            if not pressed and PROMPT in shown:
                time.sleep(0.2)  # the prompt is waiting on the terminal
                os.write(fd, b"\x03")  # Ctrl-C: the terminal sends SIGINT to its foreground group
                pressed = True
                deadline = time.monotonic() + after
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert pressed, shown.decode(errors="replace")
    return os.waitstatus_to_exitcode(status), shown.decode(errors="replace")


def no_process_runs(needle: str, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if subprocess.run(["pgrep", "-f", needle], capture_output=True).returncode != 0:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
def test_ctrl_c_at_a_prompt_over_stdio(tmp_path: Path, protocol: str) -> None:
    app = tmp_path / f"interrupt_me_{protocol[:4]}.py"
    shutil.copy(ROOT / "examples" / "preferences.py", app)
    target = f"{sys.executable} {app} --stdio"
    code, shown = interrupt_at_prompt([target, "favorite_color", '{"user": "ann"}',
                                       "--protocol", protocol])
    assert code == 130, shown
    assert "rondo call: cancelled" in shown
    assert "Traceback" not in shown and "KeyboardInterrupt" not in shown, shown
    assert no_process_runs(str(app)), "the stdio server is still running"


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
def test_ctrl_c_at_a_prompt_over_http(protocol: str) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "rondo", "run", "examples/preferences.py",
                               "--http", str(port)], cwd=ROOT, stdin=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 15
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            assert server.poll() is None and time.monotonic() < deadline, "server did not start"
            time.sleep(0.05)
        code, shown = interrupt_at_prompt([f"http://127.0.0.1:{port}/mcp", "favorite_color",
                                           '{"user": "ann"}', "--protocol", protocol])
        assert code == 130, shown
        assert "rondo call: cancelled" in shown and "Traceback" not in shown, shown
        assert server.poll() is None  # the server goes on serving
    finally:
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=10)
    assert b"Traceback" not in err, err.decode()
