"""Issue 16 items 4 and 5: uvicorn under `HttpLimits`, spoken to with raw sockets on loopback.

uvicorn runs in a thread with exactly the options `serve()` merges (`uvicorn_options`), once per
HTTP parser, so the bounds are shown to hold whichever parser runs.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

import rondo
from rondo.transport.http import HttpApp
from rondo.transport.serve.limits import HttpLimits, uvicorn_options

pytestmark = pytest.mark.slow

LIMITS = HttpLimits(header_timeout=0.5, body_timeout=0.5, keepalive_timeout=0.5,
                    max_connections=8, max_header_bytes=8192, max_headers=50)


class Served:
    def __init__(self, port: int, http: str) -> None:
        server = rondo.Server("limits", state=None)

        @server.tool
        def ping() -> str:
            """pong"""
            return "pong"

        config = uvicorn.Config(HttpApp(server), host="127.0.0.1", port=port, log_level="error",
                                lifespan="off", **uvicorn_options(LIMITS, http=http))
        self.server = uvicorn.Server(config)
        self.port = port
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Served:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(10)

    def settle(self, connections: int) -> None:
        """Poll (5 s at most) until uvicorn holds exactly `connections` open connections."""
        deadline = time.monotonic() + 5
        while len(self.server.server_state.connections) != connections:
            assert time.monotonic() < deadline, len(self.server.server_state.connections)
            time.sleep(0.01)

    def connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        return sock


@pytest.fixture(params=["httptools", "h11"])
def served(request: pytest.FixtureRequest, free_port: int) -> Iterator[Served]:
    with Served(free_port, request.param) as s:
        yield s


def read_all(sock: socket.socket, limit: float = 5.0) -> bytes:
    sock.settimeout(limit)
    chunks = []
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    except (ConnectionResetError, TimeoutError):
        pass
    return b"".join(chunks)


def read_to_close(sock: socket.socket, limit: float = 5.0) -> bytes:
    """All the server sends until it closes the connection itself. Our `limit` (per read, longer
    than any trickle here) running out first fails the test: the server's own timeout, not ours
    nor a stopwatch, is what these tests show."""
    sock.settimeout(limit)
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except ConnectionResetError:
        pass
    except TimeoutError:
        raise AssertionError(f"the server held the connection open past {limit} s: "
                             f"{b''.join(chunks)[:80]!r}") from None
    return b"".join(chunks)


def status_of(reply: bytes) -> int:
    assert reply.startswith(b"HTTP/1.1 "), reply[:80]
    return int(reply.split(b" ", 2)[1])


LIST_BODY = (b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{'
             b'"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
             b'"io.modelcontextprotocol/clientCapabilities":{}}}}')


def ok_request(served: Served) -> int:
    body = LIST_BODY
    with served.connect() as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                     b"accept: application/json, text/event-stream\r\nmcp-method: tools/list\r\n"
                     b"mcp-protocol-version: 2026-07-28\r\nconnection: close\r\n"
                     b"content-length: %d\r\n\r\n%s" % (len(body), body))
        return status_of(read_all(sock))


def trickle_headers(sock: socket.socket) -> None:
    """A request line, then one header a byte every 50 ms (until the server hangs up)."""
    sock.sendall(b"POST /mcp HTTP/1.1\r\n")
    try:
        for byte in b"x-slow: " + b"a" * 50:
            sock.sendall(bytes([byte]))
            time.sleep(0.05)
    except (BrokenPipeError, ConnectionResetError):
        pass


def test_headers_trickled_a_byte_at_a_time_get_408(served: Served) -> None:
    with served.connect() as sock:
        trickle_headers(sock)
        assert status_of(read_to_close(sock)) == 408
    assert ok_request(served) == 200


_KEEP_ALIVE_REQUEST = (b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                       b"accept: application/json\r\nmcp-method: tools/list\r\n"
                       b"mcp-protocol-version: 2026-07-28\r\ncontent-length: %d\r\n\r\n%s"
                       % (len(LIST_BODY), LIST_BODY))


def _one_reply(sock: socket.socket) -> bytes:
    """One whole response on a keep-alive connection (headers plus content-length bytes)."""
    sock.settimeout(5)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":", 1)[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length")))
    while len(rest) < length:
        rest += sock.recv(65536)
    return head


def test_a_busy_keep_alive_connection_outlives_the_header_timeout(served: Served) -> None:
    # One timer serves every request of a connection: quick requests for three header
    # timeouts in a row must all be answered, none cut off by a deadline of an earlier one.
    with served.connect() as sock:
        end = time.monotonic() + 3 * LIMITS.header_timeout
        answered = 0
        while time.monotonic() < end:
            sock.sendall(_KEEP_ALIVE_REQUEST)
            assert status_of(_one_reply(sock)) == 200
            answered += 1
            time.sleep(0.01)
        assert answered > 20


def test_a_second_request_trickled_on_a_kept_connection_gets_408(served: Served) -> None:
    with served.connect() as sock:
        sock.sendall(_KEEP_ALIVE_REQUEST)
        assert status_of(_one_reply(sock)) == 200
        time.sleep(0.3)  # part of a header timeout passes idle: the next request's own counts
        start = time.monotonic()
        trickle_headers(sock)
        reply = read_to_close(sock)
        elapsed = time.monotonic() - start
        assert status_of(reply) == 408
        # Not cut short by the first request's deadline: a lower bound only, which a loaded
        # machine can only make easier to meet.
        assert LIMITS.header_timeout * 0.9 <= elapsed, elapsed


def test_a_connection_that_never_sends_a_byte_is_closed(served: Served) -> None:
    with served.connect() as sock:
        reply = read_to_close(sock)  # closed by the server, not by our 5 s timeout
        assert status_of(reply) == 408  # under httptools and h11 alike, never a silent cut


def test_a_trickled_body_gets_408(served: Served) -> None:
    with served.connect() as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                     b"accept: application/json\r\ncontent-length: 1000\r\n\r\n{")
        try:
            for _ in range(40):
                sock.sendall(b" ")
                time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError):
            pass
        reply = read_to_close(sock)
        assert status_of(reply) == 408  # an empty reply (a silent cut) is not a 408


def test_connections_beyond_the_cap_get_503_and_the_server_keeps_serving(served: Served) -> None:
    idle = [served.connect() for _ in range(8)]
    try:
        served.settle(8)  # polled, not slept: the server holds all eight
        with served.connect() as extra:
            assert status_of(read_all(extra, 2)) == 503
    finally:
        for sock in idle:
            sock.close()
    served.settle(0)  # the server saw them go
    assert ok_request(served) == 200


def test_oversized_headers_get_431(served: Served) -> None:
    with served.connect() as sock:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-big: " + b"a" * 1_000_000)
        assert status_of(read_all(sock)) == 431


def test_too_many_headers_get_431(served: Served) -> None:
    with served.connect() as sock:
        headers = b"".join(b"x-h%d: v\r\n" % i for i in range(200))
        sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n" + headers + b"content-length: 0\r\n\r\n")
        assert status_of(read_all(sock)) == 431
    assert ok_request(served) == 200


def test_an_idle_keep_alive_connection_is_closed(served: Served) -> None:
    with served.connect() as sock:
        sock.sendall(b"GET /nothing HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        assert status_of(read_to_close(sock)) == 404  # then the server hangs up, not our timeout


def test_limits_are_checked_at_start_up() -> None:
    with pytest.raises(ValueError, match="header_timeout"):
        HttpLimits(header_timeout=0)
    with pytest.raises(ValueError, match="descriptor"):
        HttpLimits(max_connections=10**9)
    with pytest.raises(ValueError, match="parser"):
        uvicorn_options(HttpLimits(), http="nope")
