"""A redis-server for a probe: on a free loopback port, no persistence, killed afterwards.

    with loopback_redis() as (url, pid): ...   # pid: to SIGSTOP it, say
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator


@contextlib.contextmanager
def loopback_redis() -> Iterator[tuple[str, int]]:
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no"], stdout=subprocess.DEVNULL)
    try:
        import redis

        for _ in range(200):  # up to 10 s for it to answer
            try:
                redis.Redis(port=port, socket_timeout=0.5).ping()
                break
            except redis.RedisError:
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0", proc.pid
    finally:
        proc.kill()
        proc.wait()
