"""Cost of sealing plus opening a typical ~200-byte request state.

Run: .venv/bin/python benchmarks/bench_state.py   (prints microseconds per seal+open)
"""

from __future__ import annotations

import time
import types

import msgspec

import rondo.state as state
from rondo.server.context import Context

ROUNDS = 2_000
REPEATS = 50

DATA = {
    "step": 2,
    "flight": {"from": "LHR", "to": "JFK", "date": "2026-09-14", "fare": "economy-flex"},
    "passengers": [{"name": "Ada Lovelace", "seat": "14C"}, {"name": "Alan Turing", "seat": "14D"}],
    "quote": 1234.5,
}
PARAMS = {
    "name": "book_flight",
    "arguments": {"from": "LHR", "to": "JFK", "date": "2026-09-14", "passengers": 2},
    "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
    "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
}


def per_round_us(seal_open) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(ROUNDS):
            seal_open()
        best = min(best, time.perf_counter() - start)
    return best / ROUNDS * 1e6


def main() -> None:
    ctx = Context(
        types.SimpleNamespace(name="travel"), request_method="tools/call", request_params=PARAMS
    )
    keys = [("k2026a", b"a" * 32), ("k2026b", b"b" * 32)]
    signed = state.StatePolicy(keys=keys, principal=lambda ctx: "user-42")
    encrypted = state.StatePolicy(keys=keys, principal=lambda ctx: "user-42", encrypt=True)
    print(f"state data: {len(msgspec.json.encode(DATA))} bytes of JSON")
    for label, policy in (("signed (default)", signed), ("encrypted", encrypted)):
        token = policy.seal_for(ctx, DATA)
        assert policy.open_for(ctx, token) == DATA
        us = per_round_us(lambda p=policy: p.open_for(ctx, p.seal_for(ctx, DATA)))
        print(f"StatePolicy {label}: {us:.1f} us per seal+open (token {len(token)} chars)")

    def functional() -> None:
        token = state.seal(DATA, ctx, keys=keys, principal="user-42")
        state.open(token, ctx, keys=keys, principal="user-42")

    print(f"rondo.state.seal/open: {per_round_us(functional):.1f} us per seal+open")


if __name__ == "__main__":
    main()
