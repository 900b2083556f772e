"""The legacy bridge of `rondo.proxy` (docs/gateway.md, "The legacy bridge"): a 2025-11-25
upstream's mid-call `elicitation/create`, `sampling/createMessage` and `roots/list` served to
2026-07-28 clients as input rounds, holding the upstream call (`Hold`) or replaying it
(`Replay`). Loaded only by a proxy given `bridge=`."""

from __future__ import annotations

from .relay import Bridge, Hold, Replay, bridge_mode

__all__ = ["Bridge", "Hold", "Replay", "bridge_mode"]
