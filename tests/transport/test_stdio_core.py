"""The stdio transport as a host sees it: a spawned process, one JSON object per line
(spec digest §3). Every test here starts a process."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.helpers_core import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    LOG_LEVEL,
    PARSE_ERROR,
    SUB_ID,
    check,
    request,
)

pytestmark = pytest.mark.slow

APP = textwrap.dedent(
    '''
    import asyncio
    import rondo

    server = rondo.Server("stdio-core", state=None)


    @server.tool
    def echo(text: str) -> str:
        """Echo."""
        return text


    @server.tool
    async def sleepy(ctx: rondo.Context) -> str:
        """Log, then wait until cancelled."""
        await ctx.info("sleeping")
        await asyncio.sleep(30)
        return "woke"


    @server.tool
    def change() -> str:
        """Announce a tool-list change."""
        server.notify_tools_changed()
        return "changed"
    '''
)


@pytest.fixture
def app_file(tmp_path: Path) -> Path:
    path = tmp_path / "app.py"
    path.write_text(APP)
    return path


class Proc:
    """A stdio server process with line-level helpers."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.p = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
        self.buffer = b""

    def write(self, data: bytes) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, message: Any) -> None:
        self.write(json.dumps(message).encode() + b"\n")

    def line(self, timeout: float = 10.0) -> dict[str, Any]:
        """The next stdout line, which must be exactly one JSON object."""
        assert self.p.stdout is not None
        fd = self.p.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(left, 0))
            if not ready:
                raise AssertionError(f"no line within {timeout}s; stderr: {self.stderr_now()}")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise AssertionError(f"stdout closed; stderr: {self.stderr_now()}")
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\n", 1)
        message = json.loads(raw)  # nothing but JSON on stdout
        assert isinstance(message, dict)
        return message

    def quiet(self, seconds: float) -> bool:
        """True if nothing arrives on stdout for `seconds`."""
        assert self.p.stdout is not None
        if self.buffer:
            return False
        ready, _, _ = select.select([self.p.stdout.fileno()], [], [], seconds)
        return not ready

    def close(self, timeout: float = 10.0) -> tuple[int, bytes]:
        assert self.p.stdin is not None
        self.p.stdin.close()
        rest = self.p.stdout.read() if self.p.stdout else b""
        code = self.p.wait(timeout)
        return code, self.buffer + rest

    def stderr_now(self) -> str:
        if self.p.poll() is None:
            return "(still running)"
        return (self.p.stderr.read() if self.p.stderr else b"").decode(errors="replace")[-2000:]

    def kill(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


@pytest.fixture
def proc(app_file: Path):
    server = Proc([sys.executable, "-m", "rondo", "run", str(app_file)])
    yield server
    server.kill()


def test_one_json_object_per_line_and_clean_exit(proc):
    proc.send(request("server/discover", id=1))
    proc.send(request("tools/call", {"name": "echo", "arguments": {"text": "a\nb"}}, id=2))
    first, second = proc.line(), proc.line()
    check(first, "server/discover")
    check(second, "tools/call")
    assert {first["id"], second["id"]} == {1, 2}
    by_id = {m["id"]: m for m in (first, second)}
    assert by_id[2]["result"]["content"][0]["text"] == "a\nb"
    code, rest = proc.close()
    assert code == 0 and rest == b""


def test_invalid_json_then_keeps_going(proc):
    proc.write(b"{not json\n")
    error = proc.line()
    check(error)
    assert error["error"]["code"] == PARSE_ERROR and "id" not in error
    proc.write(b"[1, 2]\n")
    assert proc.line()["error"]["code"] == INVALID_REQUEST
    proc.write(b"[" * 100_000 + b"\n")  # nested past the decoder's recursion limit
    assert proc.line()["error"]["code"] == INVALID_PARAMS  # the one nesting bound (wire/bounds.py)
    proc.write(b"\n   \n")  # blank lines are ignored
    proc.send(request("server/discover", id="ok"))
    assert proc.line()["id"] == "ok"
    assert proc.close()[0] == 0


def test_oversized_line_is_refused_then_keeps_going(app_file):
    script = (
        "import sys, asyncio\n"
        "from rondo.cli import load_server\n"
        "from rondo.transport.stdio import serve\n"
        f"server = load_server({str(app_file)!r})\n"
        "asyncio.run(serve(server, max_message=4096))\n"
    )
    p = Proc([sys.executable, "-c", script])
    try:
        big = request("tools/call", {"name": "echo", "arguments": {"text": "x" * 100_000}}, id=1)
        p.send(big)
        error = p.line()
        check(error)
        assert error["error"]["code"] == INVALID_REQUEST
        p.send(request("tools/call", {"name": "echo", "arguments": {"text": "small"}}, id=2))
        answer = p.line()
        assert answer["id"] == 2 and answer["result"]["content"][0]["text"] == "small"
        assert p.close()[0] == 0
    finally:
        p.kill()


def test_cancelled_request_gets_nothing_more(proc):
    proc.send(request("tools/call", {"name": "sleepy"}, id="s", meta_extra={LOG_LEVEL: "info"}))
    log = proc.line()
    assert log["method"] == "notifications/message"  # it is running
    proc.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": "s", "reason": "user"}})
    assert proc.quiet(0.5)
    proc.send(request("server/discover", id="after"))
    assert proc.line()["id"] == "after"
    code, rest = proc.close()
    assert code == 0 and b'"s"' not in rest


def test_listen_on_stdio(proc):
    proc.send(request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=7))
    ack = proc.line()
    check(ack)
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["_meta"] == {SUB_ID: 7}
    proc.send(request("tools/call", {"name": "change"}, id=8))
    messages = [proc.line(), proc.line()]
    change = next(m for m in messages if m.get("method") == "notifications/tools/list_changed")
    check(change)
    assert change["params"]["_meta"] == {SUB_ID: 7}
    assert any(m.get("id") == 8 for m in messages)
    code, rest = proc.close()  # end of input ends the listen stream too
    assert code == 0
    for line in rest.splitlines():
        check(json.loads(line))


def test_duplicate_inflight_id_is_refused(proc):
    proc.send(request("tools/call", {"name": "sleepy"}, id=1))
    proc.send(request("tools/call", {"name": "echo", "arguments": {"text": "x"}}, id=1))
    error = proc.line()
    assert error["error"]["code"] == INVALID_REQUEST
    proc.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    assert proc.close()[0] == 0


def test_nothing_but_json_on_stdout_even_with_logging(tmp_path):
    """The server's own logs (warnings about the state key, exceptions) go to stderr."""
    path = tmp_path / "noisy.py"
    path.write_text(textwrap.dedent(
        '''
        import logging
        import rondo

        server = rondo.Server("noisy")

        @server.tool
        def fail() -> str:
            """Raise."""
            logging.getLogger("app").warning("about to fail")
            raise RuntimeError("boom")
        '''
    ))
    p = Proc([sys.executable, "-m", "rondo", "run", str(path)])
    try:
        p.send(request("tools/call", {"name": "fail"}, id=1))
        answer = p.line()
        assert answer["result"]["isError"] is True
        code, rest = p.close()
        assert code == 0 and rest == b""
        assert p.p.stderr is not None
    finally:
        p.kill()


def test_stdin_from_dev_null_exits_at_once(app_file):
    """epoll refuses /dev/null: the server must still see end of input and exit 0."""
    done = subprocess.run(
        [sys.executable, "-m", "rondo", "run", str(app_file)],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=20,
    )
    assert done.returncode == 0 and done.stdout == b""


def test_stdin_from_a_regular_file(app_file, tmp_path):
    requests = tmp_path / "in.jsonl"
    requests.write_text(json.dumps(request("server/discover", id=1)) + "\n")
    with requests.open("rb") as stdin:
        done = subprocess.run([sys.executable, "-m", "rondo", "run", str(app_file)],
                              stdin=stdin, capture_output=True, timeout=20)
    assert done.returncode == 0
    (line,) = done.stdout.splitlines()
    assert json.loads(line)["result"]["resultType"] == "complete"
