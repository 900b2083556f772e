"""The benchmark fixture with the least sealing of `floor_minseal.py`: for `benchmarks/legs.py`.

The same `add` and `ask_color` as `benchmarks/server.py`, every MCP check of rondo kept, but the
state sealed the way `floor_minseal.py` seals it: one HMAC-SHA256 over `[expiry, data]` and the
canonical params, one standard base64, no key id (so no rotation), no method, audience or
principal in the MAC, no reasons for a refusal. So it is the best an MRTR flow in rondo could do
if its codec cost the least any sealing can: rondo less its codec's extra features. Not
deployable as it is (no key rotation; a token opens for another method with the same params, and
on any server holding the key); never a target of `run.py`.
"""

from __future__ import annotations

import sys
from typing import Any

import floor_minseal as least
import server as fixture

from rondo.state import StatePolicy
from rondo.wire.errors import state_rejected


class LeastSealing(StatePolicy):
    """`StatePolicy` with `floor_minseal.py`'s sealing and opening (see the module text)."""

    __slots__ = ()

    def seal_for(self, ctx: Any, data: Any, *, ttl: float | None = None,
                 once: bool | None = None) -> str:
        return least.seal(ctx.request_params, data)

    def open_for(self, ctx: Any, token: Any) -> Any:
        try:
            return least.open_state(ctx.request_params, token)
        except least.Refused:
            raise state_rejected() from None


fixture.server.state_policy = LeastSealing(secret=b"m" * 32)

if __name__ == "__main__":
    fixture.main(sys.argv[1:])
