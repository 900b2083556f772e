"""One nesting bound for every path (issue 37 defect 9).

Arguments nested 500-900 deep used to overflow the recursive copy middleware sees (-32603 and
162 KB of traceback logged per 1.2 KB request, before any middleware could refuse it), and about
990 deep escaped the typed lane as an uncaught RecursionError when no middleware was set. Now a
message nested more than `MAX_DEPTH` (128) levels, itself level one, is answered -32602 with its
id before middleware, the typed lane or a handler sees it: over HTTP, stdio and memory, with or
without middleware, and nothing is logged.
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
from rondo.testing import connect
from rondo.wire.bounds import MAX_DEPTH, may_be_deep, too_deep
from tests.helpers.helpers_core import (
    INVALID_PARAMS,
    VERSION,
    asgi_client,
    http_headers,
    request,
    run,
)

NESTING = {"code": INVALID_PARAMS, "message": "Invalid params: nested deeper than 128 levels",
           "data": {"maxDepth": 128}}
# The message, params and arguments are three levels: a list nested this deep fills the bound.
FITS = MAX_DEPTH - 3


def body(depth: int, id: Any = 5, tool: str = "take") -> bytes:  # noqa: A002
    message = request("tools/call", {"name": tool, "arguments": {"data": "X"}}, id=id)
    return json.dumps(message).replace('"X"', "[" * depth + "1" + "]" * depth).encode()


def make_server(calls: list[str] | None) -> rondo.Server:
    async def counting(view: Any, call_next: Any) -> Any:  # a rate limiter would sit here
        assert calls is not None
        calls.append(view.method)
        return await call_next(view)

    server = rondo.Server("deep", state=None, middleware=None if calls is None else [counting])

    @server.tool
    def take(data: Any) -> str:
        """Take anything (the typed lane answers it)."""
        return "ok"

    @server.tool
    def take_ctx(data: Any, ctx: rondo.Context) -> str:
        """Take anything (the general path answers it)."""
        return "ok"

    return server


def post(app: Any, raw: bytes, tool: str = "take") -> tuple[int, dict]:
    headers = http_headers(request("tools/call", {"name": tool, "arguments": {}}))

    async def go() -> tuple[int, dict]:
        async with asgi_client(app) as client:
            response = await client.post("/mcp", content=raw, headers=headers)
            return response.status_code, response.json()

    return run(go())


@pytest.mark.parametrize("with_middleware", [False, True])
@pytest.mark.parametrize("tool", ["take", "take_ctx"])
@pytest.mark.parametrize("depth", [FITS + 1, 450, 900, 990, 5_000])
def test_http_refuses_deep_arguments_before_anything_runs(
        with_middleware: bool, tool: str, depth: int, caplog: pytest.LogCaptureFixture) -> None:
    calls: list[str] | None = [] if with_middleware else None
    app = make_server(calls).asgi()
    with caplog.at_level(logging.DEBUG, logger="rondo"):
        status, answer = post(app, body(depth, tool=tool), tool)
    assert status == 400 and answer["error"] == NESTING
    assert answer.get("id") == (5 if depth < 990 else None)  # past the decoder's limit: no id read
    assert calls in (None, [])  # the chain never ran (so nothing in it could have crashed)
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]


@pytest.mark.parametrize("with_middleware", [False, True])
@pytest.mark.parametrize("tool", ["take", "take_ctx"])
def test_http_serves_the_deepest_message_allowed(with_middleware: bool, tool: str) -> None:
    calls: list[str] | None = [] if with_middleware else None
    status, answer = post(make_server(calls).asgi(), body(FITS, tool=tool), tool)
    assert status == 200 and answer["result"]["content"][0]["text"] == "ok"
    assert calls in (None, ["tools/call"])


@pytest.mark.parametrize("with_middleware", [False, True])
def test_memory_holds_the_same_bound(with_middleware: bool) -> None:
    calls: list[str] | None = [] if with_middleware else None
    conn = connect(make_server(calls))

    async def go() -> tuple[dict, dict]:
        deep = await conn.send(json.loads(body(FITS + 1)))
        fits = await conn.send(json.loads(body(FITS, id=6)))
        assert deep is not None and fits is not None
        return deep, fits

    deep, fits = run(go())
    assert deep["id"] == 5 and deep["error"] == NESTING
    assert fits["id"] == 6 and fits["result"]["content"][0]["text"] == "ok"
    assert calls in (None, ["tools/call"])


def test_stdio_holds_the_same_bound(tmp_path: Any) -> None:
    app = tmp_path / "app.py"
    app.write_text(textwrap.dedent("""
        from typing import Any
        import rondo

        async def counting(view, call_next):
            return await call_next(view)

        server = rondo.Server("s", state=None, middleware=[counting])

        @server.tool
        def take(data: Any) -> str:
            '''Take anything.'''
            return "ok"

        server.run_stdio()
    """))
    lines = [body(FITS + 1, id=1), body(900, id=2), body(5_000, id=3), body(FITS, id=4),
             b'{"jsonrpc": "2.0", "method": "notifications/x", "params": {"a": '
             + b"[" * 200 + b"]" * 200 + b"}}"]
    done = subprocess.run([sys.executable, str(app)], input=b"\n".join(lines) + b"\n",
                          capture_output=True, timeout=60)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    by_id = {a["id"]: a for a in answers if "id" in a}
    assert by_id[1]["error"] == NESTING and by_id[2]["error"] == NESTING
    assert by_id[4]["result"]["content"][0]["text"] == "ok"
    # 5,000 deep (past the decoder, no id read) and the deep notification: id-less errors.
    assert [a["error"] for a in answers if "id" not in a] == [NESTING, NESTING]
    assert len(answers) == 5 and b"Traceback" not in done.stderr


def test_the_legacy_era_holds_the_same_bound() -> None:
    server = make_server([])
    app = server.asgi()
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "x" , "version": "1"}, "deep": "X"}}
    raw = json.dumps(init).replace('"X"', "[" * 200 + "]" * 200).encode()
    headers = {"content-type": "application/json",
               "accept": "application/json, text/event-stream"}

    async def go() -> tuple[int, dict]:
        async with asgi_client(app) as client:
            response = await client.post("/mcp", content=raw, headers=headers)
            return response.status_code, response.json()

    status, answer = run(go())
    assert status == 400 and answer["id"] == 1 and answer["error"] == NESTING


def depth_of(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    return 0


JSON = st.recursive(st.none() | st.integers() | st.text(max_size=3),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=2), inner, max_size=3), max_leaves=30)


@given(JSON, st.integers(min_value=0, max_value=12))
def test_too_deep_agrees_with_a_recursive_count(value: Any, limit: int) -> None:
    assert too_deep(value, limit) == (depth_of(value) > limit)


@given(JSON)
def test_the_byte_filter_never_misses_a_deep_body(value: Any) -> None:
    raw = json.dumps(value).encode()
    if too_deep(value, MAX_DEPTH):
        assert may_be_deep(raw)


def test_the_byte_filter_lets_ordinary_messages_by() -> None:
    assert not may_be_deep(body(10))
    assert may_be_deep(body(FITS + 1))
    assert VERSION  # the helpers' version is the one the bodies carry


def test_the_length_guard_is_exact() -> None:
    # The shortest body nesting MAX_DEPTH + 1 levels is all brackets: it must still be counted.
    shortest = b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1)
    assert too_deep(json.loads(shortest)) and may_be_deep(shortest)
    fits = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    assert not too_deep(json.loads(fits)) and not may_be_deep(fits)
