"""The default stdio path, exactly as `rondo run` and `server.run_stdio()` take it.

That path answers plain requests without an event loop, then hands the rest of the input to
the asyncio loop at the first message that needs one; both halves must bound line size, see
end of input (a pipe, /dev/null, a regular file) and answer a last line without a newline.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.helpers_core import INVALID_REQUEST, PARSE_ERROR, check, request

pytestmark = pytest.mark.slow

APP = textwrap.dedent(
    '''
    import asyncio
    import sys

    import rondo

    server = rondo.Server("stdio-default", state=None)


    @server.tool
    def echo(text: str) -> str:
        """Echo (plain def: answered without an event loop)."""
        return text


    @server.tool
    async def later(text: str) -> str:
        """Echo after a pause (async: hands the input over to the event loop)."""
        await asyncio.sleep(0.01)
        return "later " + text


    if __name__ == "__main__":
        server.run_stdio()
    '''
)
LIMIT = 4 * 1024 * 1024  # the default bound of one message (DEFAULT_MAX_MESSAGE)


@pytest.fixture
def app_file(tmp_path: Path) -> Path:
    path = tmp_path / "stdio_app.py"
    path.write_text(APP)
    return path


def line(rid: Any, tool: str, text: str) -> bytes:
    return json.dumps(request("tools/call", {"name": tool, "arguments": {"text": text}}, id=rid)).encode()


def serve(command: list[str], stdin: Any) -> list[dict[str, Any]]:
    """Run the server to completion on `stdin` (bytes, or an open file); its stdout messages."""
    kwargs: dict[str, Any] = {"input": stdin} if isinstance(stdin, bytes) else {"stdin": stdin}
    done = subprocess.run(command, capture_output=True, timeout=60, **kwargs)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    messages = [json.loads(raw) for raw in done.stdout.splitlines()]
    for message in messages:
        check(message)
    return messages


@pytest.fixture(params=["rondo run", "run_stdio"])
def command(request: pytest.FixtureRequest, app_file: Path) -> list[str]:
    if request.param == "rondo run":
        return [sys.executable, "-m", "rondo", "run", str(app_file)]
    return [sys.executable, str(app_file)]


def texts(messages: list[dict[str, Any]]) -> dict[Any, Any]:
    return {m["id"]: m["result"]["content"][0]["text"] if "result" in m else m["error"]["code"]
            for m in messages}


def test_oversized_line_is_refused_then_the_next_is_answered(command: list[str]) -> None:
    big = line(1, "echo", "x" * (LIMIT + 10))
    messages = serve(command, big + b"\n" + line(2, "echo", "small") + b"\n")
    refused, answered = messages
    assert refused["error"]["code"] == INVALID_REQUEST and "too large" in refused["error"]["message"]
    assert refused.get("id") is None
    assert texts([answered]) == {2: "small"}


def test_oversized_line_after_the_hand_over_to_the_event_loop(command: list[str]) -> None:
    big = line(2, "echo", "x" * (LIMIT + 10))
    messages = serve(command, line(1, "later", "a") + b"\n" + big + b"\n" + line(3, "echo", "b") + b"\n")
    refused = [m for m in messages if "id" not in m or m["id"] is None]
    assert [m["error"]["code"] for m in refused] == [INVALID_REQUEST]
    assert texts([m for m in messages if m.get("id") is not None]) == {1: "later a", 3: "b"}


def test_oversized_last_line_without_newline_ends_cleanly(command: list[str]) -> None:
    messages = serve(command, line(1, "echo", "a") + b"\n" + b'{"x": "' + b"y" * (LIMIT + 10))
    assert texts(messages[:1]) == {1: "a"}
    assert [m["error"]["code"] for m in messages[1:]] == [INVALID_REQUEST]


@pytest.mark.parametrize("tool", ["echo", "later"])
def test_last_line_without_newline_is_answered(command: list[str], tool: str) -> None:
    messages = serve(command, line(1, "echo", "first") + b"\n" + line(2, tool, "last"))
    want = "last" if tool == "echo" else "later last"
    assert texts(messages) == {1: "first", 2: want}


def test_bad_json_last_line_without_newline_is_a_parse_error(command: list[str]) -> None:
    messages = serve(command, line(1, "echo", "ok") + b"\n{not json")
    assert texts(messages[:1]) == {1: "ok"}
    assert messages[1]["error"]["code"] == PARSE_ERROR


def test_stdin_from_a_regular_file_across_the_hand_over(command: list[str], tmp_path: Path) -> None:
    requests = tmp_path / "in.jsonl"
    requests.write_bytes(b"\n".join([line(1, "echo", "a"), line(2, "later", "b"), line(3, "echo", "c"),
                                     line(4, "later", "d")]))  # no final newline
    with requests.open("rb") as stdin:
        messages = serve(command, stdin)
    assert texts(messages) == {1: "a", 2: "later b", 3: "c", 4: "later d"}


def test_stdin_from_dev_null(command: list[str]) -> None:
    with open("/dev/null", "rb") as stdin:
        assert serve(command, stdin) == []


def test_empty_and_blank_input(command: list[str]) -> None:
    assert serve(command, b"") == []
    assert serve(command, b"\n  \n\t\n") == []
