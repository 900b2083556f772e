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

import math
import sys
import time
from binascii import Error as Base64Error
from binascii import a2b_base64, b2a_base64
from hmac import compare_digest
from typing import Any

import floor
import floor_minseal as least
import server as fixture

from rondo.state import StatePolicy
from rondo.wire.errors import state_rejected

_decode = floor._decode


class LeastSealing(StatePolicy):
    """`StatePolicy` with `floor_minseal.py`'s sealing and opening (see the module text)."""

    __slots__ = ()

    def seal_for(self, ctx: Any, data: Any, *, ttl: float | None = None,
                 once: bool | None = None) -> str:
        claims = least._canonical([math.ceil(time.time() + 300), data])
        mac = least._mac(claims + b"\n" + least._bound(ctx.request_params))
        return b2a_base64(claims + mac, newline=False).decode("ascii")

    def open_for(self, ctx: Any, token: Any) -> Any:
        try:
            raw = a2b_base64(token, strict_mode=True)
        except (Base64Error, TypeError, ValueError):
            raise state_rejected() from None
        claims, tag = raw[:-32], raw[-32:]
        if not compare_digest(least._mac(claims + b"\n" + least._bound(ctx.request_params)), tag):
            raise state_rejected()
        expiry, data = _decode(claims)
        if expiry < time.time():
            raise state_rejected()
        return data


fixture.server.state_policy = LeastSealing(secret=b"m" * 32)

if __name__ == "__main__":
    fixture.main(sys.argv[1:])
