"""Loopback ports and an ASGI app served on one in a thread, for the tests that need a real
socket (a subprocess or an httpx client connects to it)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn


def free_port() -> int:
    """A loopback TCP port that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def served(app: Any, port: int | None = None) -> Iterator[tuple[str, uvicorn.Server]]:
    """Serve an ASGI app on loopback in a thread (on `port`, or a free one); yields (its /mcp
    URL, the uvicorn server), stopped after."""
    port = port or free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise AssertionError("the loopback server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/mcp", server
    finally:
        stop(server, thread)


def stop(server: uvicorn.Server, thread: threading.Thread | None = None) -> None:
    server.should_exit = True
    if thread is not None:
        thread.join(10)
