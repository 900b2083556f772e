"""Bad server behaviour never hangs the client: each case ends in a clear exception, in bounds.

Fake servers: a tiny stdio script per misbehaviour, and a stdlib HTTP server in a thread.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from rondo.client import Client, InputRequiredError, ProtocolError, RequestTimeout, TransportError

pytestmark = pytest.mark.slow

STDIO_SERVER = """
import json, sys, time
mode = sys.argv[1]
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    rid = msg["id"]
    def send(obj):
        sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()
    if mode == "malformed":
        sys.stdout.write("this is not json\\n"); sys.stdout.flush()
    elif mode == "deep":
        sys.stdout.write("[" * 100000 + "\\n"); sys.stdout.flush()
    elif mode == "wrong-id":
        send({"jsonrpc": "2.0", "id": 999, "result": {"resultType": "complete", "tools": []}})
    elif mode == "stall":
        time.sleep(60)
    elif mode == "exit":
        sys.exit(3)
    elif mode == "endless":
        send({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "input_required",
              "inputRequests": {"k": {"method": "elicitation/create", "params": {"message": "again?",
              "requestedSchema": {"type": "object", "properties": {}}}}}}})
"""


@pytest.fixture
def stdio_script(tmp_path: Path) -> Callable[[str], list[str]]:
    script = tmp_path / "bad_server.py"
    script.write_text(textwrap.dedent(STDIO_SERVER))
    return lambda mode: [sys.executable, str(script), mode]


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 20))  # the outer bound: a hang fails the test


async def call(target: Any, **options: Any) -> Any:
    async with Client(target, protocol="2026-07-28", **options) as client:
        return await client.call_tool("anything", {})


@pytest.mark.parametrize("mode", ["malformed", "deep"])
def test_stdio_malformed_json(stdio_script: Callable[[str], list[str]], mode: str) -> None:
    with pytest.raises(ProtocolError, match="malformed JSON"):
        run(call(stdio_script(mode)))


def test_stdio_wrong_id(stdio_script: Callable[[str], list[str]]) -> None:
    with pytest.raises(ProtocolError, match="never sent"):
        run(call(stdio_script("wrong-id")))


def test_stdio_stall_times_out(stdio_script: Callable[[str], list[str]]) -> None:
    with pytest.raises(RequestTimeout, match=r"^no answer to tools/call \(id 1\) within 0\.5 s$"):
        run(call(stdio_script("stall"), timeout=0.5))


def test_stdio_process_exit(stdio_script: Callable[[str], list[str]]) -> None:
    with pytest.raises(TransportError, match="exited"):
        run(call(stdio_script("exit")))


def test_stdio_endless_input_required(stdio_script: Callable[[str], list[str]]) -> None:
    with pytest.raises(InputRequiredError, match=r"^server still asked for input after 4 rounds \(cap 4\)$") as caught:
        run(call(stdio_script("endless"), on_elicit=lambda r: {"action": "accept", "content": {}}, max_rounds=4))
    assert caught.value.reason == "rounds" and caught.value.last_result["resultType"] == "input_required"


def test_stdio_deadline(stdio_script: Callable[[str], list[str]]) -> None:
    with pytest.raises(InputRequiredError, match=r"^input_required exchange passed its 0\.5 s deadline$") as caught:
        run(call(stdio_script("endless"), on_elicit=lambda r: {"action": "accept", "content": {}},
                 max_rounds=10**6, deadline=0.5))
    assert caught.value.reason == "deadline"


class Fake(BaseHTTPRequestHandler):
    mode = "json"

    def log_message(self, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        rid = body.get("id")
        mode = self.server.mode  # type: ignore[attr-defined]
        self.server.received.append(body)  # type: ignore[attr-defined]
        sse = {"sse-malformed": b"data: {not json\n\n", "sse-array": b"data: [1]\n\n",
               "sse-neither": b'data: {"jsonrpc": "2.0"}\n\n',
               "sse-wrong-id": b'data: {"jsonrpc": "2.0", "id": "other", "result": {}}\n\n'}
        if mode in sse:
            self._send(200, "text/event-stream", sse[mode])
        elif mode == "sse-notice-then-answer":
            notice = {"jsonrpc": "2.0", "method": "notifications/message",
                      "params": {"level": "info", "data": "working"}}
            answer = {"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", "tools": []}}
            self._send(200, "text/event-stream",
                       f"data: {json.dumps(notice)}\n\ndata: {json.dumps(answer)}\n\n".encode())
        elif mode == "empty-200":
            self._send(200, "application/json", b"")
        elif mode == "not-rpc":
            self._send(200, "application/json", b'{"tools": []}')
        elif mode == "json-404":
            self._send(404, "application/json", b'{"detail": "no such endpoint"}')
        elif mode.startswith("legacy-") and body.get("method") == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "fake", "version": "1"}}
            self._send(200, "application/json",
                       json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode())
        elif mode == "legacy-notify-500" and "id" not in body:
            self._send(500, "text/plain", b"notifications are broken here")
        elif mode == "legacy-stall" and "id" not in body:
            self._send(202, "application/json", b"")
        elif mode == "legacy-stall":
            self._stall()
        elif mode == "malformed":
            self._send(200, "application/json", b"{not json")
        elif mode == "deep":
            self._send(200, "application/json", b"[" * 100_000)
        elif mode == "wrong-id":
            self._send(200, "application/json", json.dumps({"jsonrpc": "2.0", "id": "other", "result": {}}).encode())
        elif mode == "html-500":
            self._send(500, "text/html", b"<h1>oops</h1>")
        elif mode == "stall-sse":
            self._stall()
        elif mode == "sse-ends":
            self._send(200, "text/event-stream", b"event: message\ndata: \n\n")
        elif mode == "error-400":
            error = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "bad params"}}
            self._send(400, "application/json", json.dumps(error).encode())

    def _stall(self) -> None:
        """An SSE stream that sends one keep-alive comment, then nothing until the server stops
        (30 s at most)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(b": keep-alive\n\n")
        self.wfile.flush()
        self.server.stop.wait(30)  # type: ignore[attr-defined]

    def _send(self, status: int, ctype: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def http_server() -> Iterator[Callable[[str], str]]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Fake)
    httpd.daemon_threads = True
    httpd.stop = threading.Event()  # type: ignore[attr-defined]
    httpd.received = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()

    def url(mode: str) -> str:
        httpd.mode = mode  # type: ignore[attr-defined]
        return f"http://127.0.0.1:{httpd.server_address[1]}/mcp"

    url.received = httpd.received  # type: ignore[attr-defined]
    yield url
    httpd.stop.set()  # type: ignore[attr-defined]
    httpd.shutdown()


async def list_tools(url: str, **options: Any) -> Any:
    async with Client(url, protocol="2026-07-28", **options) as client:
        return await client.list_tools()


@pytest.mark.parametrize(("mode", "error", "match"), [
    ("malformed", ProtocolError, "malformed JSON"),
    ("deep", ProtocolError, "malformed JSON"),
    ("wrong-id", ProtocolError, "answered id 'other'"),
    ("html-500", TransportError, "HTTP 500"),
    ("sse-ends", TransportError, "closed the response stream"),
    ("sse-malformed", ProtocolError, "malformed JSON in an SSE event"),
    ("sse-array", ProtocolError, "SSE event that is not a JSON-RPC message"),
    ("sse-neither", ProtocolError, "neither a response nor a request"),
    ("sse-wrong-id", ProtocolError, "answered id 'other' on the stream of request"),
    ("empty-200", ProtocolError, "HTTP 200 with no body"),
    ("not-rpc", ProtocolError, "JSON that is not a JSON-RPC response"),
    ("json-404", TransportError, "HTTP 404"),
])
def test_http_bad_answers(http_server: Callable[[str], str], mode: str, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        run(list_tools(http_server(mode)))


def test_http_json_rpc_error_on_a_4xx_is_read(http_server: Callable[[str], str]) -> None:
    from rondo.client import McpError

    with pytest.raises(McpError, match="^bad params$") as caught:
        run(list_tools(http_server("error-400")))
    assert caught.value.code == -32602


def test_http_stalled_stream_times_out(http_server: Callable[[str], str]) -> None:
    with pytest.raises(RequestTimeout, match=r"^no answer to tools/list \(id 1\) within 0\.5 s$"):
        run(list_tools(http_server("stall-sse"), timeout=0.5))


def test_auto_mode_falls_back_to_legacy_on_a_non_mcp_answer(http_server: Callable[[str], str]) -> None:
    async def go() -> None:
        async with Client(http_server("html-500")):
            pass

    # The probe's HTTP 500 says "not modern"; the handshake that follows fails the same way.
    with pytest.raises(TransportError, match="HTTP 500"):
        run(go())


def test_http_notification_on_the_stream_reaches_the_callback(http_server: Callable[[str], str]) -> None:
    seen: list[dict[str, Any]] = []
    assert run(list_tools(http_server("sse-notice-then-answer"), on_notification=seen.append)) == []
    assert [m["params"]["data"] for m in seen] == ["working"]


def test_http_nothing_listening_is_a_transport_error(free_port: int) -> None:
    with pytest.raises(TransportError, match="failed"):
        run(list_tools(f"http://127.0.0.1:{free_port}/mcp"))


def test_http_legacy_notification_refused_fails_the_handshake(http_server: Callable[[str], str]) -> None:
    async def go() -> None:
        async with Client(http_server("legacy-notify-500"), protocol="2025-11-25"):
            pass

    with pytest.raises(TransportError, match="HTTP 500"):
        run(go())


def test_http_legacy_timeout_tells_the_server_it_gave_up(http_server: Callable[[str], str]) -> None:
    """2025-11-25 over HTTP: a request the client stops waiting for is cancelled on the wire."""
    url = http_server("legacy-stall")
    received: list[dict[str, Any]] = http_server.received  # type: ignore[attr-defined]

    async def go() -> None:
        async with Client(url, protocol="2025-11-25", timeout=0.5) as client:
            with pytest.raises(RequestTimeout, match=r"^no answer to tools/call \(id \d+\) within 0\.5 s$"):
                await client.call_tool("slow")
            for _ in range(100):  # the notice is sent in the background
                if any(m.get("method") == "notifications/cancelled" for m in received):
                    return
                await asyncio.sleep(0.02)

    run(go())
    call = next(m for m in received if m.get("method") == "tools/call")
    cancelled = [m for m in received if m.get("method") == "notifications/cancelled"]
    assert [m["params"]["requestId"] for m in cancelled] == [call["id"]]
