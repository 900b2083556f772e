"""`rondo proxy UPSTREAM`: a real process serving an upstream (itself on loopback HTTP) over
--http and over stdio, walked by rondo.Client on both eras."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from typing import Any

import pytest

from rondo.cli import main
from rondo.client import Client, ElicitRequest, ElicitResult
from tests.helpers.gateway_upstream import Recorder, free_port, served, upstream_server
from tests.helpers.processes import end

ERAS = ["2025-11-25", "2026-07-28"]


def blue(request: ElicitRequest) -> Any:
    return ElicitResult("accept", {"color": "blue"})


def wait_for_line(proc: subprocess.Popen[bytes], needle: bytes, timeout: float = 20.0) -> bytes:
    """Read stderr lines until one holds `needle` (deadline-bounded; the process must live)."""
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout
    seen = b""
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        seen += line
        if needle in line:
            return line
        if not line and proc.poll() is not None:
            break
    raise AssertionError(f"no {needle!r} from rondo proxy; stderr so far: {seen.decode()!r}")


@pytest.fixture
def upstream() -> Any:
    recorder = Recorder(upstream_server().asgi())
    with served(recorder) as (url, _):
        yield url, recorder


def test_rondo_proxy_http_serves_both_eras(upstream: Any) -> None:
    url, recorder = upstream
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "rondo", "proxy", url, "--http", str(port),
         "--header", "Authorization: Bearer proxy-own", "--timeout", "5"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ})
    try:
        line = wait_for_line(proc, b"serving rondo-proxy at")
        assert f"http://127.0.0.1:{port}/mcp".encode() in line

        async def go() -> None:
            for protocol in ERAS:
                async with Client(f"http://127.0.0.1:{port}/mcp", protocol=protocol,
                                  on_elicit=blue,
                                  headers={"Authorization": "Bearer client-secret"}) as client:
                    assert client.protocol_version == protocol
                    assert (await client.call_tool("add", {"a": 4, "b": 5})).text == "9"
                    assert (await client.call_tool("color")).text == "color=blue"

        asyncio.run(go())
    finally:
        end(proc, 10, signal.SIGINT)
    assert {post.get("authorization") for post in recorder.posts} == {"Bearer proxy-own"}


@pytest.mark.parametrize("protocol", ERAS)
def test_rondo_proxy_over_stdio(upstream: Any, protocol: str) -> None:
    url, _ = upstream

    async def go() -> None:
        async with Client([sys.executable, "-m", "rondo", "proxy", url], protocol=protocol,
                          on_elicit=blue, timeout=20) as client:
            assert (await client.call_tool("echo", {"text": "via stdio"})).text == "via stdio"
            assert (await client.call_tool("cleanup", {"folder": "/c"})).text == (
                "step 2: /c blue")

    asyncio.run(go())


@pytest.mark.parametrize("argv, message", [
    (["http://127.0.0.1:1/mcp", "--header", "no-colon"], "expected 'Name: value'"),
    (["http://127.0.0.1:1/mcp", "--header", "Authorization Bearer SEKRET"], "expected 'Name: value'"),
    (["http://127.0.0.1:1/mcp", "--timeout", "0"], "--timeout must be"),
    (["http://127.0.0.1:1/mcp", "--timeout", "soon"], "--timeout needs seconds"),
])
def test_bad_flags_are_refused(argv: list[str], message: str,
                               capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit, match="2"):
        main(["proxy", *argv])
    err = capsys.readouterr().err
    assert message in err
    assert "SEKRET" not in err  # a malformed header is refused without echoing its value


def test_empty_upstream_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["proxy", "  "]) == 2
    assert "UPSTREAM is empty" in capsys.readouterr().err
