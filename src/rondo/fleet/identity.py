"""Worker ids (they live in `rondo.core.replicas`, a layer down, for legacy sessions)."""

from __future__ import annotations

from ..core.replicas import ENV_WORKER_ID, check_worker_id, session_prefix, worker_id

__all__ = ["ENV_WORKER_ID", "check_worker_id", "session_prefix", "worker_id"]
