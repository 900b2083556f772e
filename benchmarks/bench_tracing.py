"""What tracing costs when it is on but nothing exports: `rondo` against `rondo-tracing`, interleaved.

    .venv/bin/python benchmarks/bench_tracing.py              # about 2 minutes
    .venv/bin/python benchmarks/bench_tracing.py --rounds 3   # a quicker look

Both servers run at once (pinned to the same CPU, so they meet the same neighbours), and each
round measures one, then the other, alternating which goes first: HTTP `add` requests/s and
MRTR `ask_color` flows/s with wrk (the scripts `run.py` uses). A difference smaller than the
spread between rounds of one target is noise; the median of the per-round ratios is the figure.
Sequential runs (`run.py --targets rondo,rondo-tracing`) put minutes between the two and, on a
shared 2-core machine, their difference is mostly whatever else ran meanwhile.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as bench  # noqa: E402

NAMES = ("rondo", "rondo-tracing")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per wrk run")
    options = parser.parse_args()
    args = argparse.Namespace(connections=2, duration=options.duration, warmup=2, repeat=1)
    servers: dict[str, tuple[subprocess.Popen[bytes], int]] = {}
    try:
        for name in NAMES:
            target, port = bench.TARGETS[name], bench.free_port()
            proc = subprocess.Popen(target.command("http", str(port)), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    preexec_fn=bench.pinned(bench.SERVER_CPU), cwd=bench.ROOT)
            servers[name] = (proc, port)
            bench.wait_http_ready(port, proc)
        add_env, mrtr_env = bench.wrk_envs()
        loads = {
            "HTTP `add` requests/s": ("post.lua", add_env),
            "HTTP MRTR `ask_color` flows/s": ("mrtr.lua", mrtr_env),
        }
        rows = []
        for label, (script, env) in loads.items():
            for _, port in servers.values():
                bench.wrk(script, port, env, args, args.warmup)
            figures: dict[str, list[float]] = {name: [] for name in NAMES}
            for round_no in range(options.rounds):
                order = NAMES if round_no % 2 == 0 else NAMES[::-1]
                for name in order:
                    numbers = bench.wrk_numbers(bench.wrk(script, servers[name][1], env, args,
                                                          args.duration))
                    bad = numbers.get("bad_responses", 0) + numbers.get("bad", 0) + numbers["non2xx"]
                    if bad:
                        raise RuntimeError(f"{name}: {bad} bad responses on {label}")
                    if script == "mrtr.lua":
                        figures[name].append(numbers["flows"] / (numbers["duration_us"] / 1e6))
                    else:
                        figures[name].append(numbers["rps"])
            ratios = [t / r for r, t in zip(figures["rondo"], figures["rondo-tracing"], strict=True)]
            cost = (1 - statistics.median(ratios)) * 100
            rows.append((label, figures, cost, ratios))
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait(10)
    print(f"{options.rounds} interleaved rounds of {options.duration:g} s per target and load\n")
    print("| load | rondo, median (min-max) | rondo-tracing, median (min-max) | tracing cost, "
          "median of per-round ratios (goal < 5%) |")
    print("|---|---|---|---|")
    for label, figures, cost, ratios in rows:
        cells = [f"{statistics.median(v):,.0f} ({min(v):,.0f}-{max(v):,.0f})"
                 for v in figures.values()]
        costs = [1 - r for r in ratios]
        spread = f"rounds {min(costs):+.1%} to {max(costs):+.1%}"
        print(f"| {label} | {cells[0]} | {cells[1]} | {cost:+.1f}% ({spread}) |")


if __name__ == "__main__":
    main()
