"""Issue 37 item 13 on Redis: does one client's finished one-time flows lock others out, or fill
Redis without bound? And how long does a stalled Redis hold a call?

Client "alice" seals and opens one-time states (each a finished flow) on a `RedisReplayStore`
with default limits until a seal is refused or 100,000 flows are done; then "bob" seals once.
Prints the flows, whose limit refused alice, bob's outcome, the time per flow and Redis memory.
With `--stall PID` (the redis-server's pid) it then stops Redis with SIGSTOP and times one call.

    redis-server --port 6390 --save '' &
    .venv/bin/python benchmarks/probe_once_quota_redis.py redis://127.0.0.1:6390/0 [--stall PID]
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import redis

from rondo.state import RedisReplayStore


def main() -> None:
    url = sys.argv[1]
    raw = redis.Redis.from_url(url)
    raw.flushdb()
    base = raw.info("memory")["used_memory"]
    store = RedisReplayStore(url=url)
    reserve = getattr(store, "reserve", None)
    flows = 0
    started = time.perf_counter()
    while flows < 100_000:
        if reserve is not None and not reserve(f"a{flows}", 310.0, "alice"):
            break
        store.consume(f"a{flows}", 310.0)
        flows += 1
    elapsed = time.perf_counter() - started
    refused = reserve is not None and not reserve("a-next", 310.0, "alice")
    why = store.refusal("alice").message if refused else "-"
    bob = reserve is None or reserve("b0", 310.0, "bob")
    used = raw.info("memory")["used_memory"] - base
    print(f"alice finished {flows:,} flows ({elapsed / max(flows, 1) * 1e6:.0f} us each); her next "
          f"seal {'refused' if refused else 'accepted'} ({why})")
    print(f"bob's first seal: {'accepted' if bob else 'refused'}; Redis memory +{used / 2**20:.1f} MiB "
          f"({used / max(flows, 1):.0f} B a place)")
    if "--stall" in sys.argv:
        pid = int(sys.argv[sys.argv.index("--stall") + 1])
        os.kill(pid, signal.SIGSTOP)
        took: list[float] = []

        def call() -> None:
            t0 = time.perf_counter()
            try:
                store.consume("stalled", 60.0)
            except Exception as exc:  # noqa: BLE001 - reported
                print(f"during the stall: {type(exc).__name__}")
            took.append(time.perf_counter() - t0)

        thread = threading.Thread(target=call, daemon=True)
        thread.start()
        thread.join(30)
        os.kill(pid, signal.SIGCONT)
        thread.join(30)
        print(f"one call during a Redis stall held its caller {took[0]:.2f} s" if took and took[0] < 30
              else "one call during a Redis stall held its caller over 30 s (still waiting)")


if __name__ == "__main__":
    main()
