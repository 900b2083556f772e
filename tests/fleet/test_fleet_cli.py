"""`rondo run` flags on a real uvicorn: bind forms, allowed hosts and origins, root path behind
an nginx prefix, forwarded headers, log level, workers. Each server is started on port 0 and
the test reads the bound port from the "serving at" line, which is printed only once bound."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers import fleet_parts
from tests.helpers.helpers_core import SERVER_INFO, http_headers, http_messages, request
from tests.helpers.processes import end

pytestmark = pytest.mark.slow

SERVING = re.compile(r"rondo: serving fleet at http://(\S+):(\d+)(\S*)/mcp")


class Running:
    def __init__(self, proc: subprocess.Popen[str], host: str, port: int, lines: list[str]):
        self.proc, self.host, self.port, self.lines = proc, host, port, lines

    def url(self, path: str = "/mcp") -> str:
        return f"http://{self.host}:{self.port}{path}"

    def stderr(self) -> str:
        stop(self.proc)
        assert self.proc.stderr is not None
        return "".join(self.lines) + self.proc.stderr.read()


def stop(proc: subprocess.Popen[str]) -> None:
    end(proc, 10, signal.SIGINT)


def keyed_env(**extra: str) -> dict[str, str]:
    keys = subprocess.run([sys.executable, "-m", "rondo.state", "k1"], check=True,
                          capture_output=True, text=True).stdout.strip()
    return {**os.environ, "RONDO_STATE_KEYS": keys, **extra}


@contextlib.contextmanager
def rondo_run(*args: str, env: dict[str, str] | None = None) -> Iterator[Running]:
    proc = subprocess.Popen([sys.executable, "-m", "rondo", "run", str(fleet_parts.APP), *args],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env or keyed_env())
    lines: list[str] = []
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                raise AssertionError(f"exited before serving: {''.join(lines)}")
            lines.append(line)
            match = SERVING.search(line)
            if match:
                host = match.group(1)
                port = int(match.group(2))
                # Printed after the bind: the socket takes a connection right now, no retry.
                family = socket.AF_INET6 if host.startswith("[") else socket.AF_INET
                with socket.socket(family) as sock:
                    sock.connect((host.strip("[]"), port))
                yield Running(proc, host, port, lines)
                return
        raise AssertionError("no 'serving at' line")
    finally:
        stop(proc)


def discover(url: str, **headers: str) -> httpx.Response:
    message = request("server/discover")
    return httpx.post(url, json=message, headers={**http_headers(message), **headers}, timeout=10)


def served_name(response: httpx.Response) -> str:
    (message,) = http_messages(response, "server/discover")
    return message["result"]["_meta"][SERVER_INFO]["name"]


def test_ipv6_loopback_bind_serves():
    with rondo_run("--http", "[::1]:0") as run:
        assert run.host == "[::1]"
        assert served_name(discover(run.url())) == "fleet"


def test_all_interfaces_need_allowed_hosts_named_by_the_flag():
    # Refused before binding: 192.0.2.1 (TEST-NET-1) is on no interface here, so a bind attempt
    # would say "cannot bind"; the test never opens a port on every interface of the machine.
    for address in ("0.0.0.0:0", "192.0.2.1:0"):
        refused = subprocess.run([sys.executable, "-m", "rondo", "run", str(fleet_parts.APP),
                                  "--http", address], capture_output=True, text=True,
                                 env=keyed_env(), timeout=30)
        assert refused.returncode == 2 and "--allowed-hosts" in refused.stderr, refused.stderr
        assert "serving" not in refused.stderr and "cannot bind" not in refused.stderr
    # The names given are served next to the loopback ones (shown on loopback: nothing leaks).
    with rondo_run("--http", "127.0.0.1:0", "--allowed-hosts", "mcp.example.com,mcp-svc") as run:
        url = f"http://127.0.0.1:{run.port}/mcp"
        assert served_name(discover(url, host="mcp-svc")) == "fleet"
        assert served_name(discover(url, host="mcp.example.com:443")) == "fleet"
        assert served_name(discover(url)) == "fleet"  # the flag adds names: loopback stays
        refused = discover(url, host="evil.example.com")
        assert refused.status_code == 403
        message = refused.json()["error"]["message"]
        assert "'evil.example.com'" in message and "--allowed-hosts" in message
        cross = discover(url, host="mcp-svc", origin="https://other.example")
        assert cross.status_code == 403
        assert "Origin 'https://other.example'" in cross.json()["error"]["message"]
        assert "--allowed-origins" in cross.json()["error"]["message"]


def test_a_taken_port_fails_before_anything_says_serving(free_port):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", free_port))
        holder.listen(1)
        result = subprocess.run([sys.executable, "-m", "rondo", "run", str(fleet_parts.APP),
                                 "--http", f"127.0.0.1:{free_port}"], capture_output=True,
                                text=True, env=keyed_env(), timeout=30)
    assert result.returncode == 2 and "cannot bind" in result.stderr
    assert "serving" not in result.stderr


def test_allowed_origins():
    with rondo_run("--http", "0", "--allowed-origins", "https://app.example.com") as run:
        assert served_name(discover(run.url(), origin="https://app.example.com")) == "fleet"
        assert discover(run.url(), origin="https://evil.example.com").status_code == 403
        assert discover(run.url(), origin="http://localhost").status_code == 403
    bad = subprocess.run([sys.executable, "-m", "rondo", "run", str(fleet_parts.APP), "--http",
                          "0", "--allowed-origins", "app.example.com"], capture_output=True,
                         text=True, env=keyed_env(), timeout=30)
    assert bad.returncode == 2 and "--allowed-origins" in bad.stderr


def test_log_level_and_forwarded_headers():
    forwarded = {"x-forwarded-for": "203.0.113.9", "x-forwarded-proto": "https"}
    with rondo_run("--http", "0", "--log-level", "info", "--proxy-headers",
                   "--forwarded-allow-ips", "127.0.0.1") as run:
        assert discover(run.url(), **forwarded).status_code == 200
        log = run.stderr()
    assert re.search(r"203\.0\.113\.9:\d+ - \"POST /mcp", log), log  # trusted proxy: its client
    with rondo_run("--http", "0", "--log-level", "info") as run:
        assert discover(run.url(), **forwarded).status_code == 200
        log = run.stderr()
    assert "203.0.113.9" not in log and re.search(r"127\.0\.0\.1:\d+ - \"POST /mcp", log)
    with rondo_run("--http", "0") as run:  # the default level, warning: no request lines
        assert discover(run.url()).status_code == 200
        log = run.stderr()
    assert "POST /mcp" not in log


def test_root_path_behind_an_nginx_prefix():
    with rondo_run("--http", "0", "--root-path", "/tools") as run:
        assert "/tools/mcp" in "".join(run.lines)
        binary = fleet_parts.need("nginx")
        prefix = Path(tempfile.mkdtemp(prefix="rondo-nginx-prefix-"))
        (prefix / "tmp").mkdir()
        port = fleet_parts.free_port()
        (prefix / "nginx.conf").write_text(f"""
worker_processes 1; daemon off; pid nginx.pid; error_log stderr warn;
events {{ worker_connections 64; }}
http {{
  access_log off; client_body_temp_path tmp/body; proxy_temp_path tmp/proxy;
  fastcgi_temp_path tmp/f; uwsgi_temp_path tmp/u; scgi_temp_path tmp/s;
  server {{
    listen 127.0.0.1:{port};
    location /tools/ {{ proxy_pass http://127.0.0.1:{run.port}/; proxy_set_header Host $host;
                        proxy_buffering off; }}
  }}
}}
""")
        nginx = subprocess.Popen([binary, "-p", str(prefix), "-c", "nginx.conf", "-e", "stderr"],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
        try:
            fleet_parts.wait_http(f"http://127.0.0.1:{port}/tools/healthz", nginx)
            through = f"http://127.0.0.1:{port}/tools/mcp"
            assert served_name(discover(through, host="localhost")) == "fleet"
            assert discover(f"http://127.0.0.1:{port}/tools/other").status_code == 404
        finally:
            fleet_parts.stop(nginx, signal.SIGQUIT)
            shutil.rmtree(prefix, ignore_errors=True)


def test_workers_share_the_socket_and_the_keys():
    with rondo_run("--http", "0", "--workers", "2") as run:
        assert "(2 workers)" in "".join(run.lines)
        pids: set[str] = set()
        for _ in range(3):  # the kernel picks the worker of each fresh connection
            check = subprocess.run([sys.executable, "-m", "rondo", "keys", "check", run.url(),
                                    "--samples", "40"], capture_output=True, text=True,
                                   timeout=60)
            assert check.returncode == 0, check.stdout + check.stderr
            pids |= set(re.findall(r"pid (\d+):", check.stdout))
            if len(pids) == 2:
                break
        assert len(pids) == 2 and str(run.proc.pid) not in pids
        assert served_name(discover(run.url())) == "fleet"


def test_flag_misuse_is_refused_before_serving():
    unreachable = f"redis://:hunter2@127.0.0.1:{fleet_parts.free_port()}/0"
    for args in (["--workers", "2"], ["--http", "0", "--worker-id", "bad id!"],
                 ["--http", "0", "--redis", unreachable], ["--http", "0", "--redis", "nonsense"]):
        result = subprocess.run([sys.executable, "-m", "rondo", "run", str(fleet_parts.APP),
                                 *args], capture_output=True, text=True, env=keyed_env(),
                                timeout=30, stdin=subprocess.DEVNULL)
        assert result.returncode == 2 and "serving" not in result.stderr, result.stderr
        assert "hunter2" not in result.stderr and "Traceback" not in result.stderr


def test_sigterm_ends_open_streams_and_exits_cleanly():
    with rondo_run("--http", "0", "--workers", "2") as run:
        listen = request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        with httpx.Client(timeout=10) as client, client.stream(
                "POST", run.url(), json=listen, headers=http_headers(listen)) as stream:
            lines = stream.iter_lines()
            assert any(line.startswith("data:") for line in lines)  # acknowledged: open
            run.proc.send_signal(signal.SIGTERM)
            # The server ends the stream: it cuts it 2 s after the signal (docs/deploy.md), which
            # httpx sees as an incomplete body. Our 10 s read timeout running out instead (a
            # ReadTimeout, not caught here) would mean the stream was left open.
            with contextlib.suppress(httpx.RemoteProtocolError):
                for _ in lines:
                    pass
            assert run.proc.wait(15) == 0  # a hang guard


def test_workers_with_tasks_in_process_memory_are_refused(tmp_path):
    app = tmp_path / "tasks_app.py"
    app.write_text("import rondo\nserver = rondo.Server('tasky', state=None)\n\n\n"
                   "@server.tool(task='required')\nasync def slow(n: int) -> int:\n    return n\n")
    result = subprocess.run([sys.executable, "-m", "rondo", "run", str(app), "--http",
                             "127.0.0.1:0", "--workers", "2"], capture_output=True, text=True,
                            env=keyed_env(), timeout=30, stdin=subprocess.DEVNULL)
    assert result.returncode == 2, result.stderr
    assert "MemoryTaskStore" in result.stderr and "--redis" in result.stderr
    assert "serving" not in result.stderr and "Traceback" not in result.stderr
