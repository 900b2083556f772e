"""Worker ids (they live in `rondo.server.replicas`, a layer down, for legacy sessions)."""

from __future__ import annotations

from ..server.replicas import ENV_WORKER_ID, check_worker_id, session_prefix, worker_id

__all__ = ["ENV_WORKER_ID", "check_worker_id", "session_prefix", "worker_id"]
