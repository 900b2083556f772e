"""`rondo run` and `rondo call` as a person types them: error paths, exit statuses, --header.

Every test runs the real command (`python -m rondo ...`) in a subprocess.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.loopback import free_port

pytestmark = pytest.mark.slow

APP = textwrap.dedent(
    '''
    import rondo

    server = rondo.Server("cli-app", state=None)


    @server.tool
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello, {name}!"


    @server.tool
    def broken() -> str:
        """Always fails."""
        raise RuntimeError("the tool broke")


    @server.tool
    def whoami(ctx: rondo.Context) -> str:
        """What the HTTP front door put in the request's auth."""
        return f"key={(ctx.auth or {}).get('key')}"
    '''
)

# The app behind a tiny ASGI wrapper that copies one request header into the request's auth,
# so a tool can show what `rondo call --header` sent.
HTTP_FRONT = textwrap.dedent(
    '''
    import sys

    import uvicorn
    from rondo.cli import load_server

    inner = load_server(sys.argv[1]).asgi()


    async def app(scope, receive, send):
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            scope = {**scope, "auth": {"key": headers.get(b"x-api-key", b"").decode() or None}}
        await inner(scope, receive, send)


    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    '''
)


@pytest.fixture
def app_file(tmp_path: Path) -> Path:
    path = tmp_path / "cli_app.py"
    path.write_text(APP)
    return path


def rondo(*args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rondo", *args], input=stdin, capture_output=True,
                          text=True, timeout=timeout)


def served(app_file: Path) -> str:
    """`rondo call` target: the app over stdio through `rondo run`."""
    return f"{sys.executable} -m rondo run {app_file}"


# -- rondo call ------------------------------------------------------------------------------------


def test_call_prints_the_text_and_exits_0(app_file: Path) -> None:
    done = rondo("call", served(app_file), "greet", '{"name": "Ada"}')
    assert (done.returncode, done.stdout, done.stderr) == (0, "Hello, Ada!\n", "")


def test_call_lists_tools_without_a_tool_name(app_file: Path) -> None:
    done = rondo("call", served(app_file))
    assert done.returncode == 0
    assert done.stdout.splitlines() == [
        "tools:",
        "  greet(name: string)  Greet someone.",
        "  broken()  Always fails.",
        "  whoami()  What the HTTP front door put in the request's auth.",
    ]


def test_call_json_prints_the_whole_result(app_file: Path) -> None:
    done = rondo("call", served(app_file), "greet", '{"name": "Bo"}', "--json")
    assert done.returncode == 0
    result = json.loads(done.stdout)
    assert result["content"] == [{"type": "text", "text": "Hello, Bo!"}]


def test_a_tool_error_exits_1_and_still_prints_it(app_file: Path) -> None:
    done = rondo("call", served(app_file), "broken")
    assert done.returncode == 1
    # The exception text stays in the server's log (mask_errors, the default); the model and
    # the terminal see the masked error with the reference the log carries.
    assert done.stdout.startswith("Internal error in tool 'broken' (reference ")
    assert "the tool broke" not in done.stdout


def test_an_unknown_tool_is_an_error_exit_1(app_file: Path) -> None:
    done = rondo("call", served(app_file), "nope")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("rondo call: ") and "nope" in done.stderr


@pytest.mark.parametrize(
    ("arguments", "message"),
    [("{not json", "arguments are not JSON"),
     ("[1, 2]", "arguments are one JSON object or NAME=VALUE pairs; got '[1, 2]'"),
     ('"text"', "arguments are one JSON object or NAME=VALUE pairs; got '\"text\"'")],
)
def test_bad_json_arguments_exit_2_before_starting_anything(tmp_path: Path, arguments: str, message: str) -> None:
    marker = tmp_path / "started"
    target = f"{sys.executable} -c \"open({str(marker)!r}, 'w')\""
    done = rondo("call", target, "greet", arguments)
    assert done.returncode == 2 and message in done.stderr and done.stdout == ""
    assert not marker.exists()  # refused before the server was spawned


def test_a_header_without_a_colon_exits_2(app_file: Path) -> None:
    done = rondo("call", served(app_file), "greet", '{"name": "x"}', "--header", "X-Api-Key")
    assert done.returncode == 2 and "--header wants NAME:VALUE, got 'X-Api-Key'" in done.stderr


def test_a_server_command_that_does_not_exist_exits_1(tmp_path: Path) -> None:
    done = rondo("call", str(tmp_path / "no-such-server"), "greet", "{}")
    assert done.returncode == 1 and done.stderr.startswith("rondo call: ")


@pytest.fixture
def http_url(app_file: Path, tmp_path: Path) -> Iterator[str]:
    front = tmp_path / "front.py"
    front.write_text(HTTP_FRONT)
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(front), str(app_file), str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("HTTP front did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


def test_header_is_sent_on_every_http_request(http_url: str) -> None:
    done = rondo("call", http_url, "whoami", "--header", "X-Api-Key: k-123")
    assert (done.returncode, done.stdout.strip()) == (0, "key=k-123"), done.stderr
    without = rondo("call", http_url, "whoami")
    assert (without.returncode, without.stdout.strip()) == (0, "key=None")


# -- rondo run and the top-level command ---------------------------------------------------------


def test_usage_and_unknown_commands() -> None:
    assert rondo().returncode == 2 and "usage: rondo COMMAND" in rondo().stderr
    helped = rondo("--help")
    assert helped.returncode == 0 and "call TARGET" in helped.stdout and "run APP.py" in helped.stdout
    unknown = rondo("serve")
    assert unknown.returncode == 2 and "unknown command 'serve'" in unknown.stderr


def test_run_refuses_a_missing_file_and_a_missing_server(app_file: Path, tmp_path: Path) -> None:
    missing = rondo("run", str(tmp_path / "nope.py"))
    assert missing.returncode == 1 and "no such file" in missing.stderr
    named = rondo("run", f"{app_file}:other")
    assert named.returncode == 1 and "has no rondo.Server named 'other'" in named.stderr
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    none = rondo("run", str(empty))
    assert none.returncode == 1 and "defines no rondo.Server at module level" in none.stderr
    two = tmp_path / "two.py"
    two.write_text("import rondo\na = rondo.Server('a')\nb = rondo.Server('b')\n")
    both = rondo("run", str(two))
    assert both.returncode == 1 and f"defines 2 servers; pick one of: {two}:a, {two}:b" in both.stderr
    picked = rondo("run", f"{two}:b", stdin="")
    assert picked.returncode == 0


def test_run_refuses_a_bad_http_address(app_file: Path) -> None:
    done = rondo("run", str(app_file), "--http", "localhost:http")
    assert done.returncode == 2 and "expected [HOST:]PORT" in done.stderr


def test_run_named_server_over_stdio(app_file: Path) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "greet", "arguments": {"name": "Cy"}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}}
    done = rondo("run", f"{app_file}:server", stdin=json.dumps(request) + "\n")
    assert done.returncode == 0
    assert json.loads(done.stdout)["result"]["content"][0]["text"] == "Hello, Cy!"


# -- python -m rondo.state -----------------------------------------------------------------------


def state_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rondo.state", *args], capture_output=True,
                          text=True, timeout=60)


def test_state_key_generator_prints_one_entry() -> None:
    named = state_cli("k1")
    assert named.returncode == 0
    key_id, secret = named.stdout.strip().split(":")
    assert key_id == "k1" and len(secret) == 43
    dated = state_cli()
    assert dated.returncode == 0 and dated.stdout.startswith("k20")


@pytest.mark.parametrize("args", [("a", "b"), ("--help",)])
def test_state_key_generator_usage(args: tuple[str, ...]) -> None:
    done = state_cli(*args)
    assert done.returncode == 2 and "usage: python -m rondo.state" in done.stderr


def test_state_key_generator_refuses_a_bad_id() -> None:
    done = state_cli("bad id,with:separators")
    assert done.returncode == 2 and done.stderr.startswith("python -m rondo.state: ")
    assert done.stdout == ""
