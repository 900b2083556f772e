"""Ask the client's LLM (deprecated in 2026-07-28): `rondo.sampling.create_message(...)`.

Read the answer with `rondo.sampling.response(ctx, key, request)`: `MISSING` until the client
has answered, then a `SamplingResult`. Implementation in `rondo.kinds.sampling`.
"""

from __future__ import annotations

from .kinds import MISSING, response
from .kinds.sampling import SamplingResult, create_message

__all__ = ["MISSING", "SamplingResult", "create_message", "response"]
