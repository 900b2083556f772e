"""The floor plus rondo's token codec: the least a server that seals its state can do.

    python benchmarks/floor_sealed.py http PORT    # as benchmarks/floor.py, state sealed
    python benchmarks/floor_sealed.py stdio

`benchmarks/floor.py` with one change: leg 1's requestState is a real token of rondo's format
(`rondo.state.codec.seal`: the claims, the binding to the method, params and audience, HMAC-SHA256
under a fixed key), and leg 2 opens and verifies it (`open_token`) before answering. No other MCP
work: no checks, no `Context`, no `ctx.ask`, no admission. It prices the sealing itself on top of
the floor (`legs.py`, `server_instructions.sh`): what any sealed MRTR flow pays at least, with
this codec, before the rest of the framework. Never a target of `run.py`.
"""

from __future__ import annotations

import sys
import time

import floor

from rondo.state.codec import open_token, seal
from rondo.state.keys import keyring_from

_KEYS = keyring_from(b"floor-sealed benchmark key, 32+b", None)
# The envelope rondo seals for one ctx.ask question: its digest under "q".
_ENVELOPE = {"q": {"color": "Wq3t0nWc2o8Ygk4p"}}


def answer(body: bytes) -> bytes:
    msg = floor._decode(body)
    params = msg.get("params") or {}
    if params.get("name") == "ask_color":
        if "inputResponses" in params:
            opened = open_token(params.get("requestState"), "tools/call", "bench", params, None,
                                _KEYS, time.time(), 10, None)
            if opened != _ENVELOPE:
                raise ValueError("the token opened to another envelope")
            # Answered here, not by floor.answer: that would decode the body a second time.
            return floor.answered(msg)
        else:
            token = seal(_ENVELOPE, "tools/call", "bench", params, None, _KEYS, 300, False, None,
                         time.time())
            return floor.asked(msg, token)
    return _floor_answer(body)


_floor_answer = floor.answer
floor.answer = answer  # floor.app and floor.stdio look it up at each call

if __name__ == "__main__":
    floor.main(sys.argv[1:])
