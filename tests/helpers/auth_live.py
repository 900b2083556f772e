"""A protected world on loopback for live tests and the docs: the pinned authorization server
(tests/authserver, oauth2-mock-server) and tests/helpers/protected_server.py guarding a rondo server.

    with protected_world() as url:   # "http://127.0.0.1:PORT/mcp"
        ...
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.authserver.fixture import AuthServer
from tests.helpers.loopback import free_port
from tests.helpers.processes import end

HERE = Path(__file__).resolve().parent


@contextmanager
def protected_world() -> Iterator[str]:
    with AuthServer.start() as auth:
        auth.wait_ready()
        port = free_port()
        proc = subprocess.Popen([sys.executable, str(HERE / "protected_server.py"), auth.issuer, str(port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 15
            while True:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("protected server did not start")
                time.sleep(0.1)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            end(proc, 5)
