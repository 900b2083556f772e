"""The asyncio side of stdio (`rondo.transport.stdio.serve` / `StdioSession`), in process: bad
lines once the loop has taken over, an oversized line in the middle and at the end of input,
stdin from a regular file, and a client that closed stdout."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path
from typing import Any

import rondo
from rondo.transport.stdio import OutputClosed, StdioSession, serve
from tests.helpers.helpers_core import check, request

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def line(msg: dict[str, Any]) -> bytes:
    return json.dumps(msg).encode() + b"\n"


def echo_server() -> rondo.Server:
    server = rondo.Server("stdio-loop", state=None)

    @server.tool
    def echo(text: str) -> str:
        """Says it back."""
        return text

    return server


def call(i: int, text: str = "hi") -> dict[str, Any]:
    return request("tools/call", {"name": "echo", "arguments": {"text": text}}, id=i)


def serve_pipes(payload: bytes, **options: Any) -> list[dict[str, Any]]:
    """Feed `payload` to `serve` through a pipe and return every message it wrote."""

    async def go() -> list[dict[str, Any]]:
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        writer = threading.Thread(target=lambda: (os.write(in_w, payload), os.close(in_w)))
        writer.start()
        chunks: list[bytes] = []
        reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: os.read(out_r, 65536), b"")))
        reader.start()
        with open(in_r, "rb", buffering=0) as stdin, open(out_w, "wb", buffering=0) as stdout:
            await serve(echo_server(), stdin, stdout, **options)  # type: ignore[arg-type]
        writer.join(5)
        reader.join(5)
        return [json.loads(x) for x in b"".join(chunks).splitlines()]

    return asyncio.run(asyncio.wait_for(go(), 30))


def by_id(answers: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    return {a["id"]: a for a in answers if a.get("id") is not None}


def test_bad_lines_are_answered_with_errors_and_the_next_request_is_served() -> None:
    payload = b"".join([
        line(call(1, "first")),
        b"\n   \n",                      # blank lines: nothing to answer
        b"{this is not json\n",
        b"[1, 2, 3]\n",
        b'"a string"\n',
        b"{" + b'"x": "' + b"y" * 5000 + b'"}\n',  # over max_message
        line(call(2, "after the bad ones")),
        json.dumps(call(3, "last, no newline")).encode(),
    ])
    answers = serve_pipes(payload, max_message=2048)
    errors = [a for a in answers if a.get("id") is None]
    assert [e["error"]["code"] for e in errors] == [PARSE_ERROR, INVALID_REQUEST, INVALID_REQUEST,
                                                    INVALID_REQUEST]
    assert "too large" in errors[3]["error"]["message"]
    for error in errors:
        check(error)
    answered = by_id(answers)
    assert sorted(answered) == [1, 2, 3]
    for i, text in [(1, "first"), (2, "after the bad ones"), (3, "last, no newline")]:
        check(answered[i], "tools/call")
        assert answered[i]["result"]["content"][0]["text"] == text


def test_an_oversized_line_cut_off_by_the_end_of_input_is_refused_once() -> None:
    payload = line(call(1)) + b'{"x": "' + b"y" * 10_000  # never ends
    answers = serve_pipes(payload, max_message=1024)
    assert sorted(by_id(answers)) == [1]
    errors = [a for a in answers if a.get("id") is None]
    assert len(errors) == 1 and "too large" in errors[0]["error"]["message"]


def test_stdin_from_a_regular_file_is_read_to_the_end(tmp_path: Path) -> None:
    source = tmp_path / "requests.jsonl"
    source.write_bytes(b"".join(line(call(i, f"n{i}")) for i in range(1, 41)))
    out_r, out_w = os.pipe()
    chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: os.read(out_r, 65536), b"")))
    reader.start()

    async def go() -> None:
        with source.open("rb") as stdin, open(out_w, "wb", buffering=0) as stdout:
            await serve(echo_server(), stdin, stdout)  # type: ignore[arg-type]

    asyncio.run(asyncio.wait_for(go(), 30))
    reader.join(5)
    answered = by_id([json.loads(x) for x in b"".join(chunks).splitlines()])
    assert sorted(answered) == list(range(1, 41))
    assert all(answered[i]["result"]["content"][0]["text"] == f"n{i}" for i in answered)


def test_a_session_whose_client_closed_stdout_stops_writing() -> None:
    written: list[bytes] = []
    closed = {"now": False}

    def write(data: bytes) -> None:
        if closed["now"]:
            raise OutputClosed
        written.append(data)

    async def go() -> None:
        session = StdioSession(echo_server(), write)
        session.feed(b"not json\n")
        session.feed(b"\n")
        session.feed(line(call(1)))
        await session.drain()
        assert [json.loads(x).get("id") for x in written] == [None, 1]
        closed["now"] = True
        session.feed(b"still not json\n")  # the write fails: the session stops
        assert session.output_closed
        session.feed(b"and again\n")       # nothing more is attempted
        session.send({"jsonrpc": "2.0", "method": "notifications/message", "params": {}})
        assert len(written) == 2

    asyncio.run(asyncio.wait_for(go(), 10))
