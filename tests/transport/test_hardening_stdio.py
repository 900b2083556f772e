"""Issue 16 items 11-13: stdio on a non-blocking socket, a client that closes stdout, and the
cap on requests in flight."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import rondo
from rondo.transport.stdio_loop import serve
from tests.helpers.helpers_core import request

APP = textwrap.dedent('''
    import asyncio, sys
    import rondo

    server = rondo.Server("stdio-hard", state=None)

    @server.tool
    def big(n: int) -> str:
        """A large answer."""
        return "x" * n

    @server.tool
    async def later(n: int) -> str:
        """Answers after a moment (runs on the event loop)."""
        await asyncio.sleep(0.001)
        return str(n)

    server.run_stdio()
''')


def line(msg: dict[str, Any]) -> bytes:
    return json.dumps(msg).encode() + b"\n"


def spawn(tmp_path: Path, stdin: Any, stdout: Any) -> subprocess.Popen[bytes]:
    app = tmp_path / "app.py"
    app.write_text(APP)
    return subprocess.Popen([sys.executable, str(app)], stdin=stdin, stdout=stdout,
                            stderr=subprocess.PIPE)


def io_counts(pid: int) -> dict[str, int]:
    """The kernel's I/O counters of a process: `wchar` bytes written, `syscw` write calls made."""
    pairs = (row.split(": ") for row in Path(f"/proc/{pid}/io").read_text().splitlines())
    return {key: int(value) for key, value in pairs}


@pytest.mark.slow
def test_a_non_blocking_stdout_is_waited_on_not_spun_on(tmp_path: Path) -> None:
    ours, theirs = socket.socketpair()
    theirs.setblocking(False)  # O_NONBLOCK on the shared file description, as socat gives
    proc = spawn(tmp_path, theirs.fileno(), theirs.fileno())
    theirs.close()
    try:
        for i in range(20):
            ours.sendall(line(request("tools/call", {"name": "big", "arguments": {"n": 200_000}}, id=i)))
        # Polled, not slept: wait (10 s at most) until the socket buffer is full, i.e. the bytes
        # written stop growing while 4 MB of answers are still owed.
        deadline, last = time.monotonic() + 10, -1
        while (written := io_counts(proc.pid)["wchar"]) != last:
            assert time.monotonic() < deadline, "the server never filled the socket buffer"
            last = written
            time.sleep(0.2)
        calls = io_counts(proc.pid)["syscw"]
        time.sleep(1.0)  # nobody reads: the server must wait in select, not retry its write
        retries = io_counts(proc.pid)["syscw"] - calls
        # Counted, not timed: a spinning writer makes a write call per EAGAIN (hundreds of
        # thousands a second; 176,109 with the wait removed); a waiting one makes a handful (3
        # measured) until the reader drains the socket.
        assert retries <= 50, f"server retried its write {retries} times waiting for a reader"
        ours.settimeout(10)
        buffer = b""
        while buffer.count(b"\n") < 20:
            chunk = ours.recv(1 << 20)
            assert chunk
            buffer += chunk
        answers = [json.loads(x) for x in buffer.splitlines()]
        assert sorted(a["id"] for a in answers) == list(range(20))
    finally:
        ours.close()
        proc.wait(10)


@pytest.mark.slow
@pytest.mark.parametrize("tool", ["big", "later"])  # the synchronous front, the event loop
def test_a_closed_stdout_ends_the_server_quietly(tmp_path: Path, tool: str) -> None:
    read_end, write_end = os.pipe()
    proc = spawn(tmp_path, subprocess.PIPE, write_end)
    os.close(write_end)
    os.close(read_end)  # the client is gone before the server answers anything
    assert proc.stdin is not None and proc.stderr is not None
    stderr: list[bytes] = []
    reader = threading.Thread(target=lambda: stderr.append(proc.stderr.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:  # proc.wait(20) below is the hang guard
        for i in range(2000):
            proc.stdin.write(line(request("tools/call", {"name": tool, "arguments": {"n": 10}}, id=i)))
        proc.stdin.close()
    except BrokenPipeError:
        pass  # it stopped reading: that is the point
    assert proc.wait(20) == 0
    reader.join(5)
    lines = stderr[0].decode().splitlines()
    assert len(lines) <= 2, lines[:20]
    assert any("closed stdout" in x for x in lines)


def test_requests_in_flight_are_capped_and_all_answered() -> None:
    server = rondo.Server("cap", state=None)
    running = {"now": 0, "peak": 0}

    @server.tool
    async def hold(n: int) -> str:
        """Counts how many run at once."""
        running["now"] += 1
        running["peak"] = max(running["peak"], running["now"])
        await asyncio.sleep(0.005)
        running["now"] -= 1
        return str(n)

    async def go() -> list[dict[str, Any]]:
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        payload = b"".join(line(request("tools/call", {"name": "hold", "arguments": {"n": i}}, id=i))
                           for i in range(300))
        writer = threading.Thread(target=lambda: (os.write(in_w, payload), os.close(in_w)))
        writer.start()
        chunks: list[bytes] = []
        reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: os.read(out_r, 65536), b"")))
        reader.start()
        with open(in_r, "rb", buffering=0) as stdin, open(out_w, "wb", buffering=0) as stdout:
            await serve(server, stdin, stdout, max_in_flight=8)  # type: ignore[arg-type]
        writer.join()
        reader.join(5)
        return [json.loads(x) for x in b"".join(chunks).splitlines()]

    answers = asyncio.run(asyncio.wait_for(go(), 30))
    assert len(answers) == 300 and all("result" in a for a in answers)
    assert running["peak"] <= 8
