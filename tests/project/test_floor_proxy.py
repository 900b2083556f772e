"""benchmarks/floor_proxy.py relays what it is benchmarked on: `add` and both legs of an MRTR
flow reach the real upstream (benchmarks/server.py) and come back right, as sequential.py's
checked client sees them through it; and `relay_cpu.py`'s table reports medians and ratios."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers.modules import REPO, child_env, load

run = load("benchmarks/run.py")
sequential = load("benchmarks/sequential.py")
relay_cpu = load("benchmarks/relay_cpu.py")


def test_the_proxy_floor_relays_add_and_both_legs_of_a_flow() -> None:
    up_port, floor_port = run.free_port(), run.free_port()
    env = child_env("src")
    upstream = subprocess.Popen([sys.executable, str(REPO / "benchmarks/server.py"), "http",
                                 str(up_port)], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    floor = None
    try:
        run.wait_http_ready(up_port, upstream)
        floor = subprocess.Popen([sys.executable, str(REPO / "benchmarks/floor_proxy.py"), "http",
                                  str(floor_port), str(up_port)], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        run.wait_http_ready(floor_port, floor)  # `add` answered "3" through it
        sequential.main(floor_port, 3, "add")  # each answer checked: "3"
        sequential.main(floor_port, 3, "flow")  # leg 1's state relayed back: "blue"
        assert floor.poll() is None and upstream.poll() is None
    finally:
        if floor is not None:
            run.stop(floor)
        run.stop(upstream)


def test_relay_cpu_reports_medians_and_ratios_to_the_direct_server() -> None:
    class Args:
        n, rounds = 10, 3

    cpu = {(front, what): [] for front in relay_cpu.FRONTS for what in ("add", "flow")}
    for front, factor in zip(relay_cpu.FRONTS, (1.0, 2.5, 1.7, 1.5), strict=True):
        cpu[(front, "add")] += [40.0 * factor, 400.0, 39.0 * factor]
        cpu[(front, "flow")] += [150.0 * factor, 150.0 * factor, 1.0]
    rows = relay_cpu.table(cpu, Args()).splitlines()
    assert "`relay_cpu.py --n 10 --rounds 3`" in rows[0]
    assert rows[4] == "| direct | 40.0 | 1.00x | 150.0 | 1.00x |"
    assert rows[5] == "| rondo proxy | 100.0 | 2.50x | 375.0 | 2.50x |"
    assert rows[7] == "| proxy floor | 60.0 | 1.50x | 225.0 | 1.50x |"
