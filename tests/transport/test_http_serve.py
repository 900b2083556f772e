"""A real HTTP server: `rondo run app.py --http PORT` under uvicorn, spoken to over loopback."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from tests.helpers.helpers_core import (
    ALL_CAPS,
    HEADER_MISMATCH,
    SERVER_INFO,
    http_headers,
    http_messages,
    request,
)
from tests.helpers.processes import end

pytestmark = pytest.mark.slow

APP = textwrap.dedent(
    '''
    import asyncio
    import rondo
    from rondo import elicit

    server = rondo.Server("served", "3.0.0")


    @server.tool
    async def count(n: int, ctx: rondo.Context) -> str:
        """Count with progress."""
        for i in range(1, n + 1):
            await ctx.report_progress(i, n)
            await asyncio.sleep(0.01)
        return f"counted {n}"


    @server.tool
    def name(ctx: rondo.Context) -> str:
        """Ask a name."""
        answer = ctx.ask("name", elicit.form("Name?", {"type": "object",
            "properties": {"name": {"type": "string"}}, "required": ["name"]}))
        return f"Hi {answer.content['name']}"
    '''
)


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited early: {proc.stderr.read().decode() if proc.stderr else ''}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError("server did not start listening")


@pytest.fixture
def served(tmp_path: Path, free_port: int):
    path = tmp_path / "app.py"
    path.write_text(APP)
    proc = subprocess.Popen(
        [sys.executable, "-m", "rondo", "run", str(path), "--http", str(free_port)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ},
    )
    try:
        wait_for_port(free_port, proc)
        yield f"http://127.0.0.1:{free_port}/mcp"
    finally:
        end(proc, 10, signal.SIGINT)
        assert proc.stdout is not None and proc.stdout.read() == b""  # logs go to stderr


def post(url: str, message: dict, **override: str | None) -> httpx.Response:
    return httpx.post(url, json=message, headers=http_headers(message, **override), timeout=10)


def test_rondo_run_http_serves_the_modern_wire(served):
    discover = request("server/discover")
    response = post(served, discover)
    assert response.status_code == 200
    (message,) = http_messages(response, "server/discover")
    assert message["result"]["_meta"][SERVER_INFO] == {"name": "served", "version": "3.0.0"}

    counting = request("tools/call", {"name": "count", "arguments": {"n": 3}}, id=2,
                       meta_extra={"progressToken": "c"})
    response = post(served, counting)
    assert response.headers["content-type"].startswith("text/event-stream")
    messages = http_messages(response, "tools/call")
    assert [m.get("method") for m in messages] == ["notifications/progress"] * 3 + [None]
    assert messages[-1]["result"]["content"][0]["text"] == "counted 3"

    bad = post(served, discover, mcp_method="tools/list")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == HEADER_MISMATCH


def test_mrtr_round_trip_over_real_http(served):
    first = post(served, request("tools/call", {"name": "name"}, id=1, caps=ALL_CAPS))
    (interim,) = http_messages(first, "tools/call")
    result = interim["result"]
    assert result["resultType"] == "input_required"
    retry = request("tools/call", {"name": "name", "requestState": result["requestState"],
                                   "inputResponses": {"name": {"action": "accept",
                                                               "content": {"name": "Ada"}}}},
                    id=2, caps=ALL_CAPS)
    (final,) = http_messages(post(served, retry), "tools/call")
    assert final["result"]["content"][0]["text"] == "Hi Ada"


def test_foreign_host_is_refused_by_the_real_server(served):
    message = request("server/discover")
    headers = http_headers(message)
    headers["host"] = "evil.example.com"
    response = httpx.post(served, json=message, headers=headers, timeout=10)
    assert response.status_code == 403
