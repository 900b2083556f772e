"""The benchmark fixture with its request state carried in clear: for `benchmarks/legs.py` only.

The same `add` and `ask_color` as `benchmarks/server.py`, but the state of the MRTR round is the
envelope's plain JSON text: encoded on the first leg and decoded on the retry, with no HMAC, no
binding to the method, params, audience or principal, and no expiry. Nothing a real server may
do (anyone could forge such a state); it is here so that a served run can tell what sealing and
opening cost from what the rest of an MRTR round costs. Never a target of `run.py`.
"""

from __future__ import annotations

import sys
from typing import Any

import msgspec
import server as fixture

from rondo.state import StatePolicy

_encode = msgspec.json.encode
_decode = msgspec.json.decode


class ClearState(StatePolicy):
    """`StatePolicy` with sealing and opening replaced by plain JSON (see the module text)."""

    __slots__ = ()

    def seal_for(self, ctx: Any, data: Any, *, ttl: float | None = None,
                 once: bool | None = None) -> str:
        return _encode(data).decode()

    def open_for(self, ctx: Any, token: Any) -> Any:
        return _decode(token)


fixture.server.state_policy = ClearState(secret=b"c" * 32)

if __name__ == "__main__":
    fixture.main(sys.argv[1:])
