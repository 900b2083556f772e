"""What one stdio answer costs when the caches are cold, as between two ping-pong requests.

    .venv/bin/python benchmarks/cold_calls.py [ROUNDS] [GAP_US]

Calls each piece in process after sleeping GAP_US microseconds (default 100: the CPU idles, and
on a virtual machine its caches are cold again when the call starts), in turn, ROUNDS times
(default 2000), and prints each piece's median. With no gap (GAP_US 0) the same calls run hot.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))


def pieces() -> dict[str, Callable[[], Any]]:
    import logging

    logging.getLogger("rondo.http.state_key").disabled = True
    import floor
    import msgspec
    import server
    from inprocess import ADD

    from rondo.transport.stdio import answer_now

    out: list[bytes] = []
    encode = msgspec.json.encode

    def send(message: dict[str, Any]) -> None:
        out.append(encode(message) + b"\n")

    def rondo_answer() -> None:
        answer_now(server.server, ADD, send)
        out.clear()

    return {
        "nothing (the timer and a call)": lambda: None,
        "msgspec.json.decode of the request": lambda: msgspec.json.decode(ADD),
        "floor: the whole answer": lambda: floor.answer(ADD),
        "rondo: the whole answer": rondo_answer,
    }


def main(rounds: int, gap: float) -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {0})
    calls = pieces()
    times: dict[str, list[int]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            if gap:
                time.sleep(gap)
            began = time.perf_counter_ns()
            call()
            times[name].append(time.perf_counter_ns() - began)
    skip = rounds // 10  # warm-up
    for name, spent in times.items():
        print(f"{name:38s} {statistics.median(spent[skip:]) / 1000:7.2f} us")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(int(args[0]) if args else 2000, (float(args[1]) if len(args) > 1 else 100.0) / 1e6)
