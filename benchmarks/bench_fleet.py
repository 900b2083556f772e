"""Scaling out: `add` requests/s and MRTR `ask_color` flows/s with 1 and 2 workers, direct and
behind nginx (deploy/nginx as shipped).

    .venv/bin/python benchmarks/bench_fleet.py                    # the real run (~2 minutes)
    .venv/bin/python benchmarks/bench_fleet.py --duration 1 --repeat 1 --warmup 0.5   # a look

Workers are `rondo run benchmarks/server.py --http 127.0.0.1:PORT --workers N` with shared
state keys (the kernel spreads connections over the workers of the one socket); "nginx" puts
the fleet site config in front of that socket. Load is wrk (the harness of run.py: post.lua,
mrtr.lua) with `--connections` connections. Nothing is pinned: with 2 workers the server needs
both cores, so wrk and nginx share them, and the ratio shows what a 2-core box gives, not
what 2 dedicated cores would. Writes benchmarks/results/fleet-latest.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from run import (
    RESULTS,
    ROOT,
    free_port,
    stop,
    wrk,
    wrk_envs,
    wrk_numbers,
)

SERVER = ROOT / "benchmarks" / "server.py"
NGINX_DIR = ROOT / "deploy" / "nginx"
SERVING = re.compile(r"serving \S+ at http://[^:]+:(\d+)/mcp")


def start_fleet(workers: int, keys: str) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "rondo", "run", str(SERVER), "--http", "127.0.0.1:0",
         "--workers", str(workers)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "RONDO_STATE_KEYS": keys}, cwd=ROOT,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        match = SERVING.search(line)
        if match:
            port = int(match.group(1))
            wait_ready(port, workers)
            return proc, port
    raise RuntimeError(f"rondo run exited ({proc.wait()}) before serving")


def wait_ready(port: int, workers: int, timeout: float = 30) -> None:
    """Every worker has imported the app: keep asking the key report until N pids answered."""
    pids: set[int] = set()
    deadline = time.monotonic() + timeout
    while len(pids) < workers and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/.well-known/rondo/keys",
                                        timeout=2) as resp:
                pids.add(json.loads(resp.read())["pid"])
        except OSError:
            time.sleep(0.1)
    if len(pids) < workers:
        raise RuntimeError(f"only {len(pids)} of {workers} workers answered")


def start_nginx(upstream_port: int) -> tuple[subprocess.Popen[bytes], int, Path]:
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    prefix = Path(tempfile.mkdtemp(prefix="rondo-bench-nginx-"))
    (prefix / "tmp").mkdir()
    for name in ("nginx.conf", "rondo-site.conf"):
        shutil.copy(NGINX_DIR / name, prefix / name)
    port = free_port()
    (prefix / "rondo-listen.conf").write_text(f"listen 127.0.0.1:{port};\n")
    (prefix / "rondo-upstreams.conf").write_text(
        f"upstream rondo_fleet {{ server 127.0.0.1:{upstream_port}; keepalive 64; }}\n")
    (prefix / "rondo-sessions.map").write_text("")
    proc = subprocess.Popen([binary, "-p", str(prefix), "-c", "nginx.conf", "-e", "stderr"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).close()
            return proc, port, prefix
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("nginx did not start")


def measure(port: int, args: argparse.Namespace) -> dict[str, float]:
    add_env, mrtr_env = wrk_envs()
    wrk("post.lua", port, add_env, args, args.warmup)
    add = [wrk_numbers(wrk("post.lua", port, add_env, args, args.duration))
           for _ in range(args.repeat)]
    wrk("mrtr.lua", port, mrtr_env, args, args.warmup)
    flows = [wrk_numbers(wrk("mrtr.lua", port, mrtr_env, args, args.duration))
             for _ in range(args.repeat)]
    bad = sum(r.get("bad_responses", 0) + r.get("bad", 0) + r["non2xx"] + r["socket_errors"]
              for r in (*add, *flows))
    return {
        "add_rps": max(r.get("rps", 0.0) for r in add),
        "mrtr_flows_s": max(r.get("flows", 0) / (r["duration_us"] / 1e6)
                            for r in flows if r.get("duration_us")),
        "bad": bad,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--out", type=Path, default=RESULTS / "fleet-latest.md")
    args = parser.parse_args(argv)
    if shutil.which("wrk") is None:
        parser.error("wrk is not installed (apt-get install -y wrk, or run scripts/bench.sh)")
    from rondo.state.keys import new_secret_text

    keys = f"bench:{new_secret_text()}"
    load = os.getloadavg()
    figures: dict[tuple[str, int], dict[str, float]] = {}
    for workers in (1, 2):
        fleet, port = start_fleet(workers, keys)
        try:
            print(f"{workers} worker(s), direct ...", flush=True)
            figures[("direct", workers)] = measure(port, args)
            nginx, nginx_port, prefix = start_nginx(port)
            try:
                print(f"{workers} worker(s), behind nginx ...", flush=True)
                figures[("nginx", workers)] = measure(nginx_port, args)
            finally:
                nginx.send_signal(signal.SIGQUIT)
                nginx.wait(10)
                shutil.rmtree(prefix, ignore_errors=True)
        finally:
            stop(fleet)

    lines = [
        f"Fleet scaling, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} "
        f"CPUs; load average {load[0]:.1f} before; wrk -c{args.connections}, best of "
        f"{args.repeat} x {args.duration:g} s",
        "",
        "| path | metric | 1 worker | 2 workers | ratio |",
        "|---|---|---|---|---|",
    ]
    for path in ("direct", "nginx"):
        for metric, label in (("add_rps", "`add` requests/s"), ("mrtr_flows_s", "MRTR flows/s")):
            one, two = figures[(path, 1)][metric], figures[(path, 2)][metric]
            ratio = f"{two / one:.2f}x" if one else "-"
            lines.append(f"| {path} | {label} | {one:,.0f} | {two:,.0f} | {ratio} |")
    bad = sum(f["bad"] for f in figures.values())
    lines += ["", f"bad responses: {bad:.0f}"]
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
