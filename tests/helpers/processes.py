"""Ending a child process a test started: asked to stop (SIGTERM, or the signal given), killed
if it has not within `grace` seconds, and always reaped, so no test leaves a server running behind it. And reading a
child's output pipe for its whole life (`Drained`), so a chatty child never blocks on a full pipe."""

from __future__ import annotations

import queue
import signal
import subprocess
import threading
from typing import IO, Any


def end(proc: subprocess.Popen[Any], grace: float = 5.0, sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(grace)
            return
        except subprocess.TimeoutExpired:
            proc.kill()
    proc.wait()


class Drained:
    """Every line of a child's text pipe, read by a daemon thread until the pipe closes: the
    child never blocks writing to it however much it writes. `next_line(timeout)` gives the
    lines in order as they come; `lines` is everything read so far."""

    def __init__(self, pipe: IO[str]) -> None:
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._thread.start()

    def _read(self, pipe: IO[str]) -> None:
        for line in pipe:
            self.lines.append(line)
            self._queue.put(line)
        self._queue.put(None)  # the pipe closed: the child ended

    def next_line(self, timeout: float) -> str:
        """The next line; AssertionError if none comes within `timeout` s or the pipe closed."""
        try:
            line = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no line within {timeout:g} s; read so far: {self.lines!r}") from None
        if line is None:
            self._queue.put(None)
            raise AssertionError(f"the pipe closed; read so far: {self.lines!r}")
        return line
