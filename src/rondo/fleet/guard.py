"""The start-up guard (it lives in `rondo.core.replicas`, a layer down, for the transport)."""

from __future__ import annotations

from ..core.replicas import (
    ENV_FLEET,
    FleetError,
    check_fleet,
    interactive_components,
    is_replica,
)

__all__ = ["ENV_FLEET", "FleetError", "check_fleet", "interactive_components", "is_replica"]
