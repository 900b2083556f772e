"""A relayed call's server CPU, one request at a time: the direct server, `rondo proxy` in front of
it, the same proxy with its upstream link answered from memory (benchmarks/proxy_stubbed.py: its
downstream side alone), and the proxy floor (benchmarks/floor_proxy.py) in front of it, side by
side in one run.

    .venv/bin/python benchmarks/relay_cpu.py [--n 10000] [--rounds 5]

The upstream is benchmarks/server.py over HTTP. Each round sends `--n` `add` calls, then `--n`
two-leg `ask_color` flows, to each front in turn, one after another on one keep-alive
connection (sequential.py's client, in this process), and reads the front process's user +
system CPU (/proc) before and after: µs per `add`, µs per flow. With one request in flight no
batching flatters either side, and the machine's load moves every front alike within a round, so
the ratios move less than wrk's (bench_proxy.py). Medians over rounds; every answer is checked.
Prints a markdown table, written also to benchmarks/results/relay-cpu-latest.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import sequential  # noqa: E402
from run import cpu_per, cpu_seconds, free_port, stop, wait_http_ready  # noqa: E402

RESULTS = HERE / "results"
FRONTS = ("direct", "rondo proxy", "rondo proxy, link stubbed", "proxy floor")


def spawn(argv: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[Any]:
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, **(env or {})})


def start() -> tuple[list[subprocess.Popen[Any]], dict[str, tuple[int, int]]]:
    """The upstream and both proxies in front of it: each front's (port, pid)."""
    up_port, rondo_port, floor_port = free_port(), free_port(), free_port()
    upstream = spawn([sys.executable, str(HERE / "server.py"), "http", str(up_port)])
    procs = [upstream]
    wait_http_ready(up_port, upstream)
    rondo = spawn([str(Path(sys.executable).parent / "rondo"), "proxy",
                   f"http://127.0.0.1:{up_port}/mcp", "--http", f"127.0.0.1:{rondo_port}"],
                  {"RONDO_STATE_KEYS": "bench:" + "A" * 43})
    procs.append(rondo)
    stubbed_port = free_port()
    stubbed = spawn([sys.executable, str(HERE / "proxy_stubbed.py"), str(up_port),
                     str(stubbed_port)], {"RONDO_STATE_KEYS": "bench:" + "A" * 43})
    procs.append(stubbed)
    floor = spawn([sys.executable, str(HERE / "floor_proxy.py"), "http", str(floor_port),
                   str(up_port)])
    procs.append(floor)
    for port, proc in ((rondo_port, rondo), (stubbed_port, stubbed), (floor_port, floor)):
        wait_http_ready(port, proc)
    return procs, {"direct": (up_port, upstream.pid), "rondo proxy": (rondo_port, rondo.pid),
                   "rondo proxy, link stubbed": (stubbed_port, stubbed.pid),
                   "proxy floor": (floor_port, floor.pid)}


def measure(port: int, pid: int, what: str, n: int) -> float:
    sequential.main(port, 300, what)  # warm: caches, memos, pooled connections
    before = cpu_seconds(pid)
    sequential.main(port, n, what)
    used = cpu_per((before, cpu_seconds(pid)), n)
    if used is None:
        raise RuntimeError(f"no CPU reading for pid {pid}")
    return used


def table(cpu: dict[tuple[str, str], list[float]], args: argparse.Namespace) -> str:
    rows = [f"`relay_cpu.py --n {args.n} --rounds {args.rounds}`: server CPU (user + system) of the "
            "front process, one request at a time, medians over rounds.", "",
            "| front | µs per `add` | / direct | µs per flow | / direct |", "|---|---|---|---|---|"]
    direct = {what: statistics.median(cpu[("direct", what)]) for what in ("add", "flow")}
    for front in FRONTS:
        add, flow = (statistics.median(cpu[(front, what)]) for what in ("add", "flow"))
        rows.append(f"| {front} | {add:.1f} | {add / direct['add']:.2f}x | {flow:.1f} | "
                    f"{flow / direct['flow']:.2f}x |")
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    procs, fronts = start()
    cpu: dict[tuple[str, str], list[float]] = {(f, w): [] for f in FRONTS for w in ("add", "flow")}
    try:
        for _ in range(args.rounds):
            for what in ("add", "flow"):
                for front in FRONTS:
                    port, pid = fronts[front]
                    cpu[(front, what)].append(measure(port, pid, what, args.n))
    finally:
        for proc in reversed(procs):
            stop(proc)
    text = table(cpu, args)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "relay-cpu-latest.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
