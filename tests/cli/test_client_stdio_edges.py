"""The client's stdio transport against servers that misbehave in the ways processes do:
giving up on a request, odd lines on stdout, a closed stdin, an exit mid-session, a server
that ignores SIGTERM. Public entry point only: `rondo.Client` with a command as its target.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rondo import Client
from rondo.client import ProtocolError, RequestTimeout, TransportError

pytestmark = pytest.mark.slow

SERVER = '''
import json, os, signal, sys, time
mode, log_path = sys.argv[1], sys.argv[2]
log = open(log_path, "a")

def send(obj):
    sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()

def answer(rid):
    send({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", "tools": []}})

if mode == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
answered = 0
for line in sys.stdin:
    log.write(line); log.flush()
    msg = json.loads(line)
    if "id" not in msg:
        continue
    rid = msg["id"]
    if mode == "stall":
        continue  # never answers; keeps reading (and logging) what the client sends
    if mode == "blank-lines":
        sys.stdout.write("\\n   \\n"); answer(rid)
    elif mode == "scalar":
        sys.stdout.write("5\\n"); sys.stdout.flush()
    elif mode == "neither":
        send({"jsonrpc": "2.0"})
    elif mode == "notice-first":
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}})
        answer(rid)
    elif mode == "exit-after-one":
        answer(rid); sys.exit(0)
    elif mode == "close-stdin-then-exit":
        os.close(0)  # the next write fails at once, while the process is still alive...
        answer(rid)
        time.sleep(0.2)  # ...and it exits only after that failure
        sys.exit(3)
    elif mode == "close-stdin-after-one":
        os.close(0)  # before answering, so the client's next write finds no reader
        answer(rid)
        time.sleep(20)
    elif mode == "ignore-term":
        answer(rid)
if mode == "ignore-term":
    time.sleep(30)  # stdin closed and SIGTERM ignored: only SIGKILL ends this
'''


@pytest.fixture
def server(tmp_path: Path) -> Callable[[str], tuple[list[str], Callable[[], list[dict[str, Any]]]]]:
    script = tmp_path / "odd_server.py"
    script.write_text(textwrap.dedent(SERVER))

    def start(mode: str) -> tuple[list[str], Callable[[], list[dict[str, Any]]]]:
        log = tmp_path / f"{mode}.jsonl"
        log.write_text("")
        return ([sys.executable, str(script), mode, str(log)],
                lambda: [json.loads(x) for x in log.read_text().splitlines()])

    return start


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


async def list_twice(target: list[str], **options: Any) -> None:
    async with Client(target, protocol="2026-07-28", **options) as client:
        assert await client.list_tools() == []
        await client.list_tools()


def test_a_request_given_up_on_is_cancelled_on_the_wire(server) -> None:
    target, received = server("stall")

    async def go() -> None:
        async with Client(target, protocol="2026-07-28", timeout=0.5) as client:
            with pytest.raises(RequestTimeout, match=r"^no answer to tools/list \(id \d+\) within 0\.5 s$"):
                await client.list_tools()
            for _ in range(100):
                if any(m.get("method") == "notifications/cancelled" for m in received()):
                    return
                await asyncio.sleep(0.02)

    run(go())
    listed = next(m for m in received() if m.get("method") == "tools/list")
    cancelled = [m for m in received() if m.get("method") == "notifications/cancelled"]
    assert [m["params"]["requestId"] for m in cancelled] == [listed["id"]]


def test_blank_lines_on_stdout_are_skipped(server) -> None:
    target, _ = server("blank-lines")

    async def go() -> list[Any]:
        async with Client(target, protocol="2026-07-28") as client:
            return await client.list_tools()

    assert run(go()) == []


@pytest.mark.parametrize(("mode", "match"), [
    ("scalar", "JSON value that is not a message"),
    ("neither", "neither a response nor a request"),
])
def test_odd_messages_on_stdout_are_protocol_errors(server, mode: str, match: str) -> None:
    target, _ = server(mode)
    with pytest.raises(ProtocolError, match=match):
        run(list_twice(target))


def test_a_raising_notification_callback_does_not_break_the_client(server) -> None:
    target, _ = server("notice-first")
    seen: list[str] = []

    def callback(message: dict[str, Any]) -> None:
        seen.append(message["method"])
        raise RuntimeError("callback bug")

    run(list_twice(target, on_notification=callback))
    assert seen == ["notifications/message", "notifications/message"]


def test_the_server_exiting_mid_session_fails_the_next_request(server) -> None:
    target, _ = server("exit-after-one")
    with pytest.raises(TransportError, match="exited"):
        run(list_twice(target))


def test_a_write_that_fails_because_the_server_is_exiting_says_it_exited(server) -> None:
    # The write fails before the reader sees stdout end: the error still names the exit.
    target, _ = server("close-stdin-then-exit")
    with pytest.raises(TransportError, match=r"exited \(code 3\)"):
        run(list_twice(target))


def test_a_server_that_closed_its_stdin_fails_the_next_write(server) -> None:
    target, _ = server("close-stdin-after-one")
    with pytest.raises(TransportError, match="closed its stdin"):
        run(list_twice(target))


def test_close_kills_a_server_that_ignores_eof_and_sigterm(server) -> None:
    target, _ = server("ignore-term")

    async def go() -> int | None:
        async with Client(target, protocol="2026-07-28") as client:
            await client.list_tools()
            proc = client.transport._proc  # type: ignore[attr-defined]
        return proc.returncode

    # 2 s for EOF, 2 s for SIGTERM, then SIGKILL (the server would sleep 30 s): the exit status
    # says which ended it; run()'s 30 s wait_for is only a hang guard.
    assert run(go()) == -signal.SIGKILL


def test_an_empty_command_is_refused() -> None:
    with pytest.raises(ValueError, match="needs a command"):
        Client([])
