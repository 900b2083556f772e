"""Ending a child process a test started: asked to stop (SIGTERM), killed if it has not within
`grace` seconds, and always reaped, so no test leaves a server running behind it."""

from __future__ import annotations

import subprocess
from typing import Any


def end(proc: subprocess.Popen[Any], grace: float = 5.0) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(grace)
            return
        except subprocess.TimeoutExpired:
            proc.kill()
    proc.wait()
