"""Issue 37 defect 10: the request log cannot be forged, and the handshake meets the middleware.

Before: a tool name or URI holding a newline wrote a forged line into `RequestLog`'s output, and
a 2025-11-25 `initialize` never reached server middleware (20 of 20 handshakes passed a rate
limiter allowing 5, none was logged), over HTTP and over pipes (stdio, memory) alike.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import rondo
from rondo.middleware import RATE_LIMITED, RateLimit, RequestLog, loggable
from rondo.testing import connect
from tests.helpers.helpers_core import asgi_client, request, run

INIT_PARAMS = {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "probe", "version": "1"}}


def init(rid: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": dict(INIT_PARAMS)}


def make_server(*middleware: Any) -> rondo.Server:
    server = rondo.Server("handshake", state=None, middleware=list(middleware))

    @server.tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    @server.resource("x://{name}")
    def thing(name: str) -> str:
        return name

    return server


def frozen_limit(burst: int) -> RateLimit:
    # A clock that never moves: no token comes back during the test, whatever the machine's speed.
    return RateLimit(rate=1.0, burst=burst, key=lambda view: "everyone", clock=lambda: 0.0)


# -- the log line ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "field"), [
    ("echo\n2026-01-01 INFO rondo.requests tools/call admin id=1 -> ok", "tools/call"),
    ("echo\r\x1b[2Kforged", "tools/call"),
    ("echo\u2028forged", "tools/call"),
])
def test_a_newline_in_a_name_cannot_forge_a_log_line(
        name: str, field: str, caplog: pytest.LogCaptureFixture) -> None:
    conn = connect(make_server(RequestLog()))

    async def go() -> None:
        await conn.send(request("tools/call", {"name": name, "arguments": {}}))
        await conn.send(request("resources/read", {"uri": f"x://{name}"}, id=2))

    with caplog.at_level(logging.INFO, logger="rondo.requests"):
        run(go())
    lines = [r.getMessage() for r in caplog.records if r.name == "rondo.requests"]
    assert len(lines) == 2 and lines[0].startswith(field)
    for line in lines:
        assert not any(c in line for c in "\n\r\x1b\u2028"), line
        assert "forged" in line or "admin" in line  # the name is there, escaped, not dropped


def test_an_id_and_a_principal_are_escaped_too(caplog: pytest.LogCaptureFixture) -> None:
    server = make_server(RequestLog())
    conn = connect(server)
    with caplog.at_level(logging.INFO, logger="rondo.requests"):
        run(conn.send(request("tools/call", {"name": "echo", "arguments": {"text": "a"}},
                              id="1\nforged")))
    (line,) = [r.getMessage() for r in caplog.records if r.name == "rondo.requests"]
    assert "\n" not in line and "id='1\\\\nforged'" in line


@given(st.text())
def test_loggable_is_one_short_line_that_keeps_what_is_printable(text: str) -> None:
    out = loggable(text)
    assert len(out) <= 200
    assert not any(c in out for c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\x00\x1b")
    if len(out) < 197:  # not cut: unescaping gives the text back exactly
        assert out.encode("latin-1", "backslashreplace").decode("unicode_escape") == text \
            or any(ord(c) > 0xff for c in text)


def test_loggable_round_trips_ascii_exactly() -> None:
    text = "a\\nb\nc\x00d\\"
    assert loggable(text) == "a\\\\nb\\nc\\x00d\\\\"
    assert loggable(text).encode().decode("unicode_escape") == text


# -- the handshake over HTTP ----------------------------------------------------------------------


HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def http_handshakes(server: rondo.Server, count: int) -> list[tuple[int, dict, str | None]]:
    app = server.asgi()

    async def go() -> list[tuple[int, dict, str | None]]:
        out = []
        async with asgi_client(app) as client:
            for i in range(count):
                response = await client.post("/mcp", json=init(i), headers=HEADERS)
                out.append((response.status_code, response.json(),
                            response.headers.get("mcp-session-id")))
        return out

    return run(go())


def test_http_initialize_meets_the_rate_limiter() -> None:
    answers = http_handshakes(make_server(frozen_limit(5)), 20)
    opened = [a for a in answers if "result" in a[1]]
    refused = [a for a in answers if "error" in a[1]]
    assert len(opened) == 5 and all(sid for _, _, sid in opened)
    assert len(refused) == 15
    assert {a[1]["error"]["code"] for a in refused} == {RATE_LIMITED}
    assert all(sid is None for _, _, sid in refused)  # a refused handshake opens no session


def test_http_initialize_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="rondo.requests"):
        ((status, answer, sid),) = http_handshakes(make_server(RequestLog()), 1)
    assert status == 200 and sid and answer["result"]["protocolVersion"] == "2025-11-25"
    (line,) = [r.getMessage() for r in caplog.records if r.name == "rondo.requests"]
    assert line.startswith("initialize - id=0 era=legacy") and "-> ok" in line


def test_http_session_works_after_a_logged_handshake() -> None:
    server = make_server(RequestLog())
    app = server.asgi()

    async def go() -> dict:
        async with asgi_client(app) as client:
            opened = await client.post("/mcp", json=init(), headers=HEADERS)
            sid = opened.headers["mcp-session-id"]
            headers = {**HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
            await client.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                              headers=headers)
            called = await client.post("/mcp", headers=headers, json={
                "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "hi"}}})
            return called.json()

    assert run(go())["result"]["content"][0]["text"] == "hi"


def test_a_middleware_that_answers_initialize_itself_opens_nothing() -> None:
    async def impostor(view: Any, call_next: Any) -> Any:
        return {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {}}

    ((status, answer, sid),) = http_handshakes(make_server(impostor), 1)
    assert sid is None and answer["error"]["code"] == -32603


# -- the handshake over pipes ---------------------------------------------------------------------


def test_memory_initialize_meets_the_rate_limiter_and_the_log(
        caplog: pytest.LogCaptureFixture) -> None:
    server = make_server(RequestLog(), frozen_limit(3))

    async def go() -> list[dict]:
        answers = []
        for i in range(7):
            answer = await connect(server).send(init(i))
            assert answer is not None
            answers.append(answer)
        return answers

    with caplog.at_level(logging.INFO, logger="rondo.requests"):
        answers = run(go())
    assert ["result" in a for a in answers] == [True] * 3 + [False] * 4
    assert {a["error"]["code"] for a in answers[3:]} == {RATE_LIMITED}
    lines = [r.getMessage() for r in caplog.records if r.name == "rondo.requests"]
    assert len(lines) == 7 and all(line.startswith("initialize") for line in lines)
    assert sum(f"error {RATE_LIMITED}" in line for line in lines) == 4


def test_stdio_handshake_goes_through_the_chain_and_keeps_order(tmp_path: Any) -> None:
    app = tmp_path / "app.py"
    app.write_text(textwrap.dedent("""
        import asyncio, logging, sys
        import rondo
        from rondo.middleware import RequestLog

        async def slow(view, call_next):  # the handshake waits here: what follows must wait too
            await asyncio.sleep(0.05)
            return await call_next(view)

        logging.basicConfig(stream=sys.stderr, level=logging.INFO)
        server = rondo.Server("s", state=None, middleware=[RequestLog(), slow])

        @server.tool
        def echo(text: str) -> str:
            '''Echo.'''
            return text

        server.run_stdio()
    """))
    lines = [init(1), {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "echo", "arguments": {"text": "after"}}},
             init(3)]
    done = subprocess.run([sys.executable, str(app)],
                          input="".join(json.dumps(m) + "\n" for m in lines).encode(),
                          capture_output=True, timeout=60)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers[0]["id"] == 1  # nothing is answered before the handshake
    by_id = {a["id"]: a for a in answers}
    assert len(answers) == 3 and set(by_id) == {1, 2, 3}
    assert by_id[1]["result"]["protocolVersion"] == "2025-11-25"
    # Sent while the handshake was still in the middleware: it waited, then used the session.
    assert by_id[2]["result"]["content"][0]["text"] == "after"
    assert "already initialized" in by_id[3]["error"]["message"]
    log = done.stderr.decode()
    assert "initialize - id=1 era=legacy" in log and "tools/call echo id=2" in log
