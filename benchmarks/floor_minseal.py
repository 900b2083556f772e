"""The floor plus the cheapest sealing of its state I could write: a lower bound for any codec.

    python benchmarks/floor_minseal.py http PORT    # as benchmarks/floor.py, state sealed
    python benchmarks/floor_minseal.py stdio

`benchmarks/floor.py` with one change: leg 1's requestState is `base64(claims + MAC)`, the claims
only `[expiry, data]` in JSON, the MAC one HMAC-SHA256 (pads precomputed, as `rondo.state.keys`
does) over the claims and the canonical params less `_meta`, `requestState` and `inputResponses`;
leg 2 decodes it, verifies the MAC, decodes the claims and checks the expiry and the data before
answering. Nothing else: no key id (so no rotation), no method, audience or principal, no
format marker, no size limit, no reasons for a refusal. Still sealed and verified: a token for
other params, a flipped byte or an expired token is refused. Never a target of `run.py`:
`legs.py` and `server_instructions.sh` set it beside `floor_sealed.py` (rondo's own codec) to
show what sealing costs at the least.
"""

from __future__ import annotations

import hashlib
import math
import sys
import time
from binascii import Error as Base64Error
from binascii import a2b_base64, b2a_base64
from hmac import compare_digest
from typing import Any

import floor
import msgspec

_BLOCK = b"floor-minseal benchmark key, 32+".ljust(64, b"\0")
_INNER = hashlib.sha256(bytes(b ^ 0x36 for b in _BLOCK))
_OUTER = hashlib.sha256(bytes(b ^ 0x5C for b in _BLOCK))
_canonical = msgspec.json.Encoder(order="sorted").encode
_DATA = {"q": {"color": "Wq3t0nWc2o8Ygk4p"}}  # what rondo seals for one ctx.ask question


class Refused(Exception):
    """The token did not verify (the test checks that it is raised)."""


def _mac(message: bytes) -> bytes:
    inner = _INNER.copy()
    inner.update(message)
    outer = _OUTER.copy()
    outer.update(inner.digest())
    return outer.digest()


def _bound(params: dict[str, Any]) -> bytes:
    salient = params.copy()
    for name in ("_meta", "requestState", "inputResponses"):
        salient.pop(name, None)
    return _canonical(salient)


def seal(params: dict[str, Any], data: Any) -> str:
    """The token for `data`, bound to `params` (also rondo's state in `server_minseal.py`)."""
    claims = _canonical([math.ceil(time.time() + 300), data])
    return b2a_base64(claims + _mac(claims + b"\n" + _bound(params)), newline=False).decode("ascii")


def open_state(params: dict[str, Any], token: Any) -> Any:
    """The data `token` carries if it verifies for `params` and has not expired; else `Refused`."""
    try:
        raw = a2b_base64(token, strict_mode=True)
    except (Base64Error, TypeError, ValueError):
        raise Refused("not base64") from None
    claims, tag = raw[:-32], raw[-32:]
    if not compare_digest(_mac(claims + b"\n" + _bound(params)), tag):
        raise Refused("the MAC does not verify")
    expiry, data = floor._decode(claims)
    if expiry < time.time():
        raise Refused("expired")
    return data


def answer(body: bytes) -> bytes:
    msg = floor._decode(body)
    params = msg.get("params") or {}
    if params.get("name") != "ask_color":
        return _floor_answer(body)
    if "inputResponses" not in params:
        return floor.asked(msg, seal(params, _DATA))
    if open_state(params, params["requestState"]) != _DATA:
        raise Refused("another envelope")
    return floor.answered(msg)


_floor_answer = floor.answer
floor.answer = answer  # floor.app and floor.stdio look it up at each call

if __name__ == "__main__":
    floor.main(sys.argv[1:])
