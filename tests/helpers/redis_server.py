"""A real `redis-server` for tests: started on a free loopback port, stopped afterwards.

Use it from a fixture:

    @pytest.fixture(scope="module")
    def redis_url():
        with redis_server.running() as url:
            yield url

When the binary or the `redis` client is missing the test FAILS (tests/helpers/components.py: only the
fast tier may skip); every other failure to start is an error too.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator

from tests.helpers import components
from tests.helpers.processes import end

START_TIMEOUT = 10.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextlib.contextmanager
def running() -> Iterator[str]:
    """Yield `redis://127.0.0.1:PORT/0` of a fresh, non-persistent redis-server."""
    binary = components.binary("redis-server", "redis-server")
    components.module("redis", "redis")
    workdir = tempfile.mkdtemp(prefix="rondo-redis-")
    proc: subprocess.Popen[bytes] | None = None
    try:
        for _attempt in range(3):  # a free port can be taken between probe and bind
            port = _free_port()
            proc = subprocess.Popen(
                [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", workdir, "--daemonize", "no"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            deadline = time.monotonic() + START_TIMEOUT
            while proc.poll() is None and time.monotonic() < deadline:
                if _answers_ping(port):
                    break
                time.sleep(0.05)
            if proc.poll() is None and _answers_ping(port):
                break
            _stop(proc)
            proc = None
        if proc is None:
            raise RuntimeError("redis-server did not start on a loopback port")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        if proc is not None:
            _stop(proc)
        shutil.rmtree(workdir, ignore_errors=True)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    end(proc, 5)
