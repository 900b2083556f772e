"""`serve()` answers byte for byte as plain uvicorn does with the same app (issue 37 defect 14).

`serve()` puts its own protocol under uvicorn (limits, `coalesce.py`'s one write per answer,
`eager.py`'s task-free start): none of that may change what a client receives, or when. Before
this test, every protocol-level test used POST and the coalescer's tests flushed by hand, and
nobody saw that a HEAD answer (a head with a content length, and no body ever written) was held
until the keep-alive timeout closed the connection: 5.0 s instead of a millisecond.

Each case opens a fresh loopback connection to four real servers, `serve()` and plain uvicorn
under httptools and under h11, writes the same bytes in one go (several requests at once for
pipelining) and reads until the responses it expects are complete, with a deadline: a response
that is held past the deadline fails the case. Nothing is flushed by hand. The bytes compared
are exact (`serve()` turns off the Date and Server headers; plain uvicorn is run the same way).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.loopback import free_port
from tests.helpers.processes import end

pytestmark = pytest.mark.slow

READ_DEADLINE = 2.0  # seconds for all the responses of one case (keep-alive closes at 5 s)

APP = textwrap.dedent('''
    import asyncio
    import sys

    mode, parser, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if parser == "h11":
        sys.modules["httptools"] = None  # serve() picks h11 when httptools cannot be imported

    import rondo

    server = rondo.Server("parity", state=None)


    @server.tool
    def add(a: int, b: int) -> str:
        """Add."""
        return str(a + b)


    @server.tool
    async def steps(n: int, ctx: rondo.Context) -> str:
        """Report progress n times (a streamed answer; reports of one token supersede each
        other while unsent, so only n=1 gives the same bytes on every run)."""
        for i in range(n):
            await ctx.report_progress(i + 1, n)
            await asyncio.sleep(0)
        return "done"


    if mode == "serve":
        server.run_http(port=port)
    else:
        import uvicorn

        try:
            import uvloop  # noqa: F401
            loop = "uvloop"
        except ImportError:
            loop = "auto"
        # What serve() sets for uvicorn, without its protocol (limits, coalescing, eager start).
        uvicorn.run(server.asgi(), host="127.0.0.1", port=port, http=parser, loop=loop,
                    lifespan="on", log_level="warning", access_log=False, proxy_headers=False,
                    server_header=False, date_header=False)
''')

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}


def post(name: str, body: bytes, extra: bytes = b"") -> bytes:
    return (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
            b"Mcp-Method: tools/call\r\nMcp-Name: " + name.encode() + b"\r\n" + extra
            + b"Content-Length: %d\r\n\r\n" % len(body) + body)


def call(name: str, arguments: dict, rid: int = 1) -> bytes:
    return post(name, json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {
        "name": name, "arguments": arguments, "_meta": {**META, "progressToken": "p"}}}).encode())


def plain(method: str, path: str = "/mcp", extra: bytes = b"") -> bytes:
    return b"%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n" % (method.encode(), path.encode(), extra)


# name -> (bytes written at once, the request methods whose responses are read)
CASES: dict[str, tuple[bytes, list[str]]] = {
    "get": (plain("GET"), ["GET"]),
    "get-other-path": (plain("GET", "/elsewhere"), ["GET"]),
    "head": (plain("HEAD"), ["HEAD"]),
    "head-other-path": (plain("HEAD", "/elsewhere"), ["HEAD"]),
    "head-then-get": (plain("HEAD") + plain("GET", "/elsewhere"), ["HEAD", "GET"]),
    "post-json": (call("add", {"a": 2, "b": 3}), ["POST"]),
    "post-streamed": (call("steps", {"n": 1}), ["POST"]),
    "post-expect-continue": (post("add", json.dumps({"jsonrpc": "2.0", "id": 2,
                             "method": "tools/call", "params": {"name": "add", "arguments":
                             {"a": 1, "b": 1}, "_meta": META}}).encode(),
                             b"Expect: 100-continue\r\n"), ["POST"]),
    "error-parse": (post("add", b"{not json"), ["POST"]),
    "error-unknown-tool": (call("nope", {}), ["POST"]),
    "error-bad-arguments": (call("add", {"a": "x"}), ["POST"]),
    "error-wrong-content-type": (plain("POST", extra=b"Content-Type: text/plain\r\n"
                                       b"Content-Length: 2\r\n") + b"{}", ["POST"]),
    "error-delete": (plain("DELETE"), ["DELETE"]),
    "error-malformed-request-line": (b"NOT HTTP AT ALL\r\n\r\n", ["GET"]),
    "pipelined": (call("add", {"a": 1, "b": 2}, 1) + plain("HEAD") + call("add", {"a": 3, "b": 4}, 2)
                  + plain("GET", "/elsewhere") + call("steps", {"n": 1}, 3),
                  ["POST", "HEAD", "POST", "GET", "POST"]),
}


class Reader:
    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self.sock, self.deadline, self.buf, self.closed = sock, deadline, b"", False

    def more(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0 or self.closed:
            raise TimeoutError(f"incomplete after {READ_DEADLINE} s: {self.buf[-300:]!r}")
        self.sock.settimeout(left)
        try:
            data = self.sock.recv(65536)
        except TimeoutError:
            raise TimeoutError(f"no more bytes within {READ_DEADLINE} s: {self.buf[-300:]!r}") from None
        if not data:
            self.closed = True
        self.buf += data

    def until(self, marker: bytes, start: int) -> int:
        while (at := self.buf.find(marker, start)) < 0:
            self.more()
        return at + len(marker)

    def upto(self, end: int) -> None:
        while len(self.buf) < end:
            self.more()


def read_responses(reader: Reader, methods: list[str]) -> None:
    """Read exactly the responses to `methods` (a 100 Continue head before one is read too)."""
    pos = 0
    for method in methods:
        while True:
            end = reader.until(b"\r\n\r\n", pos)
            head = reader.buf[pos:end].lower()
            status = int(head.split(b" ", 2)[1])
            pos = end
            if status != 100:
                break
        if method == "HEAD" or status in (204, 304):
            continue
        if b"transfer-encoding: chunked" in head:
            pos = reader.until(b"\r\n0\r\n\r\n", pos - 2)
        elif b"content-length:" in head:
            length = int(head.split(b"content-length:")[1].split(b"\r\n")[0])
            reader.upto(pos + length)
            pos += length
        else:  # no framing: the body runs to the close
            while not reader.closed:
                reader.more()
            pos = len(reader.buf)


def exchange(port: int, data: bytes, methods: list[str]) -> tuple[bytes, float]:
    with socket.create_connection(("127.0.0.1", port), timeout=READ_DEADLINE) as sock:
        start = time.monotonic()
        sock.sendall(data)
        reader = Reader(sock, start + READ_DEADLINE)
        read_responses(reader, methods)
        return reader.buf, time.monotonic() - start


def start(app: Path, mode: str, parser: str) -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(app), mode, parser, str(port)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env={**os.environ})
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{mode}/{parser} exited: {proc.stderr.read().decode()}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return proc, port
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"{mode}/{parser} did not listen")


@pytest.fixture(scope="module", params=["httptools", "h11"])
def servers(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[str, int, int]]:
    app = tmp_path_factory.mktemp("parity") / "app.py"
    app.write_text(APP)
    parser = request.param
    started = [start(app, "serve", parser), start(app, "uvicorn", parser)]
    try:
        yield parser, started[0][1], started[1][1]
    finally:
        for proc, _ in started:
            end(proc, 10)


@pytest.mark.parametrize("case", sorted(CASES))
def test_serve_answers_byte_for_byte_as_plain_uvicorn(servers: tuple[str, int, int],
                                                      case: str) -> None:
    parser, served, plain_port = servers
    data, methods = CASES[case]
    expected, _ = exchange(plain_port, data, methods)
    got, seconds = exchange(served, data, methods)
    assert got == expected, f"{parser} {case}"
    assert expected.startswith(b"HTTP/1.1 ")


def test_the_cases_cover_what_the_issue_names() -> None:
    methods = {m for _, ms in CASES.values() for m in ms}
    assert {"GET", "HEAD", "POST"} <= methods
    assert any(len(ms) >= 3 for _, ms in CASES.values())  # pipelining
    assert sum(name.startswith("error-") for name in CASES) >= 4
