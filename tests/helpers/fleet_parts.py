"""Real parts for fleet tests: rondo workers, nginx and redis-server on loopback ports.

A missing binary fails the test (scripts/setup.sh installs them); nothing here skips.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.loopback import free_port
from tests.helpers.processes import end

REPO = Path(__file__).resolve().parents[2]
APP = Path(__file__).resolve().parent / "fleet_app.py"
NGINX_DIR = REPO / "deploy" / "nginx"


def need(binary: str) -> str:
    path = shutil.which(binary) or (f"/usr/sbin/{binary}" if os.path.exists(f"/usr/sbin/{binary}") else None)
    if path is None:
        pytest.fail(f"{binary} is not installed: run bash scripts/setup.sh (Debian package)")
    return path


def wait_http(url: str, proc: subprocess.Popen[bytes] | None = None, timeout: float = 20.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"process exited early ({proc.returncode}): {read_err(proc)}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=1).status_code == 200:
                return
        time.sleep(0.05)
    raise AssertionError(f"{url} did not answer in {timeout}s")


def read_err(proc: subprocess.Popen[bytes]) -> str:
    if proc.stderr is None:
        return ""
    with contextlib.suppress(Exception):
        return proc.stderr.read().decode(errors="replace")[-2000:]
    return ""


class Worker:
    def __init__(self, port: int, proc: subprocess.Popen[bytes], worker_id: str | None) -> None:
        self.port = port
        self.proc = proc
        self.worker_id = worker_id
        self.url = f"http://127.0.0.1:{port}/mcp"


def start_worker(*args: str, port: int | None = None, worker_id: str | None = None,
                 env: dict[str, str] | None = None, app: Path = APP) -> Worker:
    port = port or free_port()
    command = [sys.executable, "-m", "rondo", "run", str(app), "--http", f"127.0.0.1:{port}", *args]
    if worker_id:
        command += ["--worker-id", worker_id]
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env={**os.environ, **(env or {})})
    return Worker(port, proc, worker_id)


@contextlib.contextmanager
def redis_fleet(app: Path, workers: int = 3) -> Iterator[list[Worker]]:
    """One Redis and `workers` `rondo run APP --fleet --redis URL` workers (ids w1, w2...),
    each answering /healthz before this yields; all stopped after."""
    from tests.helpers import redis_server

    need("redis-server")
    with redis_server.running() as url:
        started = [start_worker("--fleet", "--redis", url, worker_id=f"w{n}", app=app)
                   for n in range(1, workers + 1)]
        try:
            for worker in started:
                wait_http(f"http://127.0.0.1:{worker.port}/healthz", worker.proc)
            yield started
        finally:
            for worker in started:
                stop(worker.proc)


def stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    end(proc, 10, sig)


class Node:
    """`rondo run APP --http 127.0.0.1:PORT` under `env` plus `{name_var: name}`: one node of a
    fleet sharing a Redis (its stderr piped, shown if it exits before it listens)."""

    def __init__(self, app: Path, env: dict[str, str], name_var: str, name: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rondo", "run", str(app), "--http", f"127.0.0.1:{self.port}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env={**env, name_var: name})

    def wait_ready(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"node exited: {read_err(self.proc)}")
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise AssertionError("node did not start")

    def kill(self) -> None:
        """SIGKILL: a worker dying, not shutting down."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        end(self.proc, 10)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


@contextlib.contextmanager
def node_pair(app: Path, env: dict[str, str], name_var: str) -> Iterator[list[Node]]:
    """Nodes "A" and "B" of `app` sharing `env`, both listening before this yields; stopped
    after."""
    nodes = [Node(app, env, name_var, "A"), Node(app, env, name_var, "B")]
    try:
        for node in nodes:
            node.wait_ready()
        yield nodes
    finally:
        for node in nodes:
            node.stop()


@contextlib.contextmanager
def nginx(workers: list[Worker], port: int | None = None) -> Iterator[str]:
    """nginx with deploy/nginx/nginx.conf and rondo-site.conf as shipped, in front of `workers`
    (on `port`, or a free one)."""
    binary = need("nginx")
    prefix = Path(tempfile.mkdtemp(prefix="rondo-nginx-"))
    (prefix / "tmp").mkdir()
    for name in ("nginx.conf", "rondo-site.conf"):
        shutil.copy(NGINX_DIR / name, prefix / name)
    port = port or free_port()
    (prefix / "rondo-listen.conf").write_text(f"listen 127.0.0.1:{port};\n")
    lines = ["upstream rondo_fleet {"]
    lines += [f"    server 127.0.0.1:{w.port} max_fails=1 fail_timeout=30s;" for w in workers]
    lines += ["    keepalive 32;", "}"]
    lines += [f"upstream rondo_{w.worker_id} {{ server 127.0.0.1:{w.port}; }}" for w in workers]
    (prefix / "rondo-upstreams.conf").write_text("\n".join(lines) + "\n")
    (prefix / "rondo-sessions.map").write_text(
        "".join(f'"~^{w.worker_id}\\." rondo_{w.worker_id};\n' for w in workers))
    proc = subprocess.Popen([binary, "-p", str(prefix), "-c", "nginx.conf", "-e", "stderr"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc, signal.SIGQUIT)
        shutil.rmtree(prefix, ignore_errors=True)
