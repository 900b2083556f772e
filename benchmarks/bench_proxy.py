"""A proxy's cost: `add` requests/s and MRTR `ask_color` flows/s through `rondo proxy`, against
the same upstream served directly, and against FastMCP's own proxy (`create_proxy`, 4.1.6) in
front of the same upstream; server CPU per call, proxy and upstream apart. One run, side by side.

    .venv/bin/python benchmarks/bench_proxy.py                       # the real run (~2 minutes)
    .venv/bin/python benchmarks/bench_proxy.py --duration 2 --repeat 1 --warmup 1   # a look

The upstream is benchmarks/server.py (rondo: `add`, and `ask_color` asking with `ctx.ask`),
one process over HTTP. "direct" loads it; "rondo proxy" is `rondo proxy UPSTREAM --http`
(one worker) in front of it; "fastmcp proxy" is benchmarks/anchors/fastmcp_proxy.py in the
fastmcp anchor venv (run.py's: fastmcp 4.1.6 with the same uvloop and httptools). The server
side (upstream, and the proxy when there is one) is pinned to CPU 0 and wrk to CPU 1, as in
run.py, so a proxy shares its core with its upstream: flows/s is what one core gives the whole
chain ("shared core", the layout every run before 2026-12-06 05:40 UTC used). Two more
configurations run in the same rounds: "rondo proxy, own core" has CPU 0 to itself and its
upstream runs on CPU 1 beside wrk (as in production, where a proxy and its upstream do not
share a core), and "direct + neighbour" is the direct server on CPU 0 beside a second copy of
the same server, also on CPU 0 and loaded by a second wrk on CPU 1 with the same load: what a
busy process sharing its core does to a server's CPU per call, without any proxy. "proxy
floor, shared core" and "proxy floor, own core" put benchmarks/floor_proxy.py (a relay that does
no MCP work) in the two proxy layouts: what relaying alone costs there. Load is
run.py's wrk harness (post.lua, mrtr.lua: a flow counts only if its second leg
returns "blue"). Every round starts every process afresh and runs the configurations in turn;
the best round counts for throughput, the median for CPU per call. Writes
benchmarks/results/proxy-latest.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from run import (
    ANCHOR_VENVS,
    HERE,
    LOAD_CPU,
    RESULTS,
    ROOT,
    SERVER_CPU,
    cpu_per,
    cpu_seconds,
    ensure_anchor,
    free_port,
    pinned,
    stop,
    wait_http_ready,
    wrk,
    wrk_envs,
    wrk_numbers,
)

UPSTREAM = ROOT / "benchmarks" / "server.py"
FASTMCP_PROXY = ROOT / "benchmarks" / "anchors" / "fastmcp_proxy.py"
DIRECT, NEIGHBOUR = "direct", "direct + neighbour"
SHARED, OWN, FASTMCP = "rondo proxy, shared core", "rondo proxy, own core", "fastmcp proxy"
# benchmarks/floor_proxy.py: a relay with no MCP work, in both layouts (what relaying costs).
FLOOR_SHARED, FLOOR_OWN = "proxy floor, shared core", "proxy floor, own core"
CONFIGS = (DIRECT, NEIGHBOUR, SHARED, OWN, FLOOR_SHARED, FLOOR_OWN, FASTMCP)
# Where each configuration's upstream (or direct server) runs, and its proxy.
UPSTREAM_CPU = {OWN: LOAD_CPU, FLOOR_OWN: LOAD_CPU}


@dataclass
class Runs:
    add_rps: list[float] = field(default_factory=list)
    flows: list[float] = field(default_factory=list)
    bad: int = 0
    # CPU per call (add) or per flow (MRTR), microseconds: the process loaded, and the upstream
    # behind it (for "direct" the two are one).
    add_front_us: list[float] = field(default_factory=list)
    add_up_us: list[float] = field(default_factory=list)
    mrtr_front_us: list[float] = field(default_factory=list)
    mrtr_up_us: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def spawn(argv: list[str], log: Path, env: dict[str, str] | None = None,
          cpu: int = SERVER_CPU) -> subprocess.Popen[Any]:
    with log.open("wb") as out:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, preexec_fn=pinned(cpu),
                                env={**os.environ, **(env or {})}, cwd=ROOT)


def start(config: str) -> tuple[list[subprocess.Popen[Any]], int, int]:
    """The processes of one configuration (upstream first), the port loaded, and the port of
    the neighbour (the second server beside "direct + neighbour"; 0 for the others)."""
    up_port = free_port()
    upstream = spawn([sys.executable, str(UPSTREAM), "http", str(up_port)],
                     RESULTS / "proxy-upstream.log", cpu=UPSTREAM_CPU.get(config, SERVER_CPU))
    procs = [upstream]
    wait_http_ready(up_port, upstream)
    if config == DIRECT:
        return procs, up_port, 0
    if config == NEIGHBOUR:
        side_port = free_port()
        side = spawn([sys.executable, str(UPSTREAM), "http", str(side_port)],
                     RESULTS / "proxy-neighbour.log")
        wait_http_ready(side_port, side)
        return [upstream, side], up_port, side_port
    port = free_port()
    url = f"http://127.0.0.1:{up_port}/mcp"
    if config in (SHARED, OWN):
        rondo = str(Path(sys.executable).parent / "rondo")
        front = spawn([rondo, "proxy", url, "--http", f"127.0.0.1:{port}"],
                      RESULTS / "proxy-rondo.log",
                      {"RONDO_STATE_KEYS": "bench:" + "A" * 43})
    elif config in (FLOOR_SHARED, FLOOR_OWN):
        front = spawn([sys.executable, str(HERE / "floor_proxy.py"), "http", str(port),
                       str(up_port)], RESULTS / "proxy-floor.log")
    else:
        front = spawn([str(ANCHOR_VENVS / "fastmcp/bin/python"), str(FASTMCP_PROXY), url,
                       str(port)], RESULTS / "proxy-fastmcp.log")
    procs.append(front)
    wait_http_ready(port, front)
    return procs, port, 0


class Neighbour:
    """A second wrk on the load CPU driving the neighbour server with the same load, for as
    long as the measured wrk's warm-up and run (and a second more each side)."""

    def __init__(self, port: int, script: str, env: dict[str, str], args: argparse.Namespace):
        self.proc: subprocess.Popen[Any] | None = None
        if port:
            seconds = max(1, round(args.warmup)) + max(1, round(args.duration)) + 3
            self.proc = subprocess.Popen(
                ["wrk", f"-t{args.connections}", f"-c{args.connections}", f"-d{seconds}s",
                 "-s", str(HERE / "wrk" / script), f"http://127.0.0.1:{port}/mcp"],
                env={**os.environ, **env}, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, preexec_fn=pinned(LOAD_CPU))
            time.sleep(1.0)  # its connections open and its load is running

    def close(self) -> None:
        if self.proc is not None:
            stop(self.proc)


def measured(procs: list[subprocess.Popen[Any]], port: int, script: str, env: dict[str, str],
             args: argparse.Namespace, counted: str,
             direct: bool) -> tuple[dict[str, float], float | None, float | None]:
    front, up = (procs[0], procs[0]) if direct else (procs[-1], procs[0])
    before = (cpu_seconds(front.pid), cpu_seconds(up.pid))
    numbers = wrk_numbers(wrk(script, port, env, args, args.duration))
    count = numbers.get(counted, 0)
    front_us = cpu_per((before[0], cpu_seconds(front.pid)), count)
    up_us = cpu_per((before[1], cpu_seconds(up.pid)), count) if front is not up else None
    return numbers, front_us, up_us


def one_round(config: str, runs: Runs, args: argparse.Namespace) -> None:
    add_env, mrtr_env = wrk_envs()
    procs, port, side_port = start(config)
    direct = config in (DIRECT, NEIGHBOUR)
    try:
        side = Neighbour(side_port, "post.lua", add_env, args)
        try:
            wrk("post.lua", port, add_env, args, args.warmup)
            numbers, front_us, up_us = measured(procs, port, "post.lua", add_env, args,
                                                "requests", direct)
        finally:
            side.close()
        runs.add_rps.append(numbers.get("rps", 0.0))
        runs.bad += int(numbers.get("bad_responses", 0) + numbers.get("non2xx", 0))
        if front_us is not None:
            runs.add_front_us.append(front_us)
        if up_us is not None:
            runs.add_up_us.append(up_us)
        side = Neighbour(side_port, "mrtr.lua", mrtr_env, args)
        try:
            wrk("mrtr.lua", port, mrtr_env, args, args.warmup)
            numbers, front_us, up_us = measured(procs, port, "mrtr.lua", mrtr_env, args,
                                                "flows", direct)
        finally:
            side.close()
        flows = numbers.get("flows", 0.0)
        seconds = numbers.get("duration_us", 0.0) / 1e6 or args.duration
        runs.flows.append(flows / seconds)
        runs.bad += int(numbers.get("bad", 0))
        if front_us is not None:
            runs.mrtr_front_us.append(front_us)
        if up_us is not None:
            runs.mrtr_up_us.append(up_us)
    finally:
        for proc in reversed(procs):
            stop(proc)


def best(values: list[float]) -> float | None:
    return max(values) if values else None


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def fmt(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def report(results: dict[str, Runs], args: argparse.Namespace, load: tuple[float, ...]) -> str:
    direct = results[DIRECT]
    lines = [
        f"Proxy benchmark, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: "
        f"{args.repeat} rounds of {args.duration:g} s per load (warm-up {args.warmup:g} s), "
        f"{args.connections} connections, load average before {load[0]:.2f}.",
        "",
        "Layouts: direct = the server alone on CPU 0; direct + neighbour = the same beside a "
        "second copy of it on CPU 0 under the same load (a second wrk); shared core = proxy and "
        "upstream both on CPU 0 (the issue's figure so far); own core = the proxy alone on "
        "CPU 0, its upstream on CPU 1 beside wrk. wrk on CPU 1 throughout. proxy floor = "
        "benchmarks/floor_proxy.py, a relay with no MCP work, in the same two layouts.",
        "",
        "| configuration | `add` req/s (best / median) | MRTR flows/s (best / median) | "
        "CPU per `add`, front + upstream (µs) | CPU per flow, front + upstream (µs) | bad |",
        "|---|---|---|---|---|---|",
    ]
    for config in CONFIGS:
        runs = results[config]
        alone = config in (DIRECT, NEIGHBOUR)
        add_cpu = (f"{fmt(median(runs.add_front_us))}" if alone else
                   f"{fmt(median(runs.add_front_us))} + {fmt(median(runs.add_up_us))}")
        flow_cpu = (f"{fmt(median(runs.mrtr_front_us))}" if alone else
                    f"{fmt(median(runs.mrtr_front_us))} + {fmt(median(runs.mrtr_up_us))}")
        lines.append(
            f"| {config} | {fmt(best(runs.add_rps))} / {fmt(median(runs.add_rps))} | "
            f"{fmt(best(runs.flows))} / {fmt(median(runs.flows))} | {add_cpu} | {flow_cpu} | "
            f"{runs.bad} |")
    fast, side = results[FASTMCP], results[NEIGHBOUR]

    def ratio(a: float | None, b: float | None) -> str:
        return "-" if a is None or not b else f"{a / b:.2f}x"

    lines += [
        "",
        "Goals (issue 38): the proxy's own CPU per call at most 2x a direct call's server CPU; "
        "at least 5x FastMCP's proxy in flows/s. Both layouts are stated; the issue's figure "
        "so far is the shared core's.",
        "",
    ]
    for config in (SHARED, OWN, FLOOR_SHARED, FLOOR_OWN):
        runs = results[config]
        lines += [
            f"- {config}, proxy CPU / direct server CPU, `add`: "
            f"{ratio(median(runs.add_front_us), median(direct.add_front_us))} (proxy alone), "
            f"{ratio(_sum(runs.add_front_us, runs.add_up_us), median(direct.add_front_us))} "
            "(proxy + upstream); MRTR flow: "
            f"{ratio(median(runs.mrtr_front_us), median(direct.mrtr_front_us))} (proxy alone), "
            f"{ratio(_sum(runs.mrtr_front_us, runs.mrtr_up_us), median(direct.mrtr_front_us))} "
            "(proxy + upstream)",
            f"- {config}, upstream CPU / direct server CPU: "
            f"{ratio(median(runs.add_up_us), median(direct.add_front_us))} per `add`, "
            f"{ratio(median(runs.mrtr_up_us), median(direct.mrtr_front_us))} per flow",
        ]
    rondo = results[SHARED]
    lines += [
        f"- direct + neighbour / direct, server CPU: "
        f"{ratio(median(side.add_front_us), median(direct.add_front_us))} per `add`, "
        f"{ratio(median(side.mrtr_front_us), median(direct.mrtr_front_us))} per flow",
        f"- rondo proxy (shared core) / fastmcp proxy, flows/s: "
        f"{ratio(best(rondo.flows), best(fast.flows))} (best), "
        f"{ratio(median(rondo.flows), median(fast.flows))} (median); `add` req/s: "
        f"{ratio(best(rondo.add_rps), best(fast.add_rps))} (best)",
    ]
    for config in CONFIGS:
        lines += [f"- {config}: {note}" for note in results[config].notes]
    return "\n".join(lines) + "\n"


def _sum(a: list[float], b: list[float]) -> float | None:
    ma, mb = median(a), median(b)
    return None if ma is None or mb is None else ma + mb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--connections", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "proxy-latest.md")
    parser.add_argument("--skip-fastmcp", action="store_true",
                        help="leave FastMCP's proxy out (its 0.1 s per call adds nothing to "
                             "the CPU comparison)")
    args = parser.parse_args(argv)
    if shutil.which("wrk") is None:
        parser.error("wrk is not installed (apt-get install -y wrk, or run scripts/bench.sh)")
    RESULTS.mkdir(parents=True, exist_ok=True)
    configs = [c for c in CONFIGS if not (args.skip_fastmcp and c == FASTMCP)]
    if FASTMCP in configs:
        ensure_anchor("fastmcp")
    load = os.getloadavg()
    results = {config: Runs() for config in CONFIGS}
    for n in range(args.repeat):
        for config in configs:
            print(f"round {n + 1}: {config} ...", flush=True)
            try:
                one_round(config, results[config], args)
            except Exception as exc:  # one broken configuration must not hide the others
                results[config].notes.append(f"round {n + 1} failed: {exc}")
                print(f"  {config} failed: {exc}", flush=True)
    text = report(results, args, load)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
