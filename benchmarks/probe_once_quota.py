"""Issue 37 item 13: does one client's finished one-time flows lock other clients out?

Client "alice" seals and opens one-time states (each a finished flow) with the default
`MemoryReplayStore` until a seal is refused or 100,000 flows are done; then "bob" seals once.
Prints how many flows alice finished, whose limit refused her, and whether bob got his seal.

    .venv/bin/python benchmarks/probe_once_quota.py
"""

from __future__ import annotations

import time

from rondo.state import MemoryReplayStore


def main() -> None:
    store = MemoryReplayStore()
    flows = 0
    started = time.perf_counter()
    while flows < 100_000:
        if not store.reserve(f"a{flows}", 310.0, "alice"):
            break
        store.consume(f"a{flows}", 310.0)
        flows += 1
    elapsed = time.perf_counter() - started
    refusal = getattr(store, "refusal", None)
    refused_alice = store.reserve("a-next", 310.0, "alice")
    why = refusal("alice").message if refusal is not None and not refused_alice else "-"
    bob = store.reserve("b0", 310.0, "bob")
    print(f"alice finished {flows:,} flows in {elapsed:.2f} s; her next seal "
          f"{'accepted' if refused_alice else 'refused'} ({why})")
    print(f"bob's first seal: {'accepted' if bob else 'refused'}; live entries {len(store):,}")


if __name__ == "__main__":
    main()
