"""A worker's name in a fleet (`RONDO_WORKER_ID`, `rondo run --worker-id`).

Legacy (2025-11-25) session ids start with it (`w1.`), so a proxy can pin a session to the
worker that opened it by matching the prefix: the session id does not exist yet when
`initialize` is routed, so no hash of it can lead back to that worker.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

ENV_WORKER_ID = "RONDO_WORKER_ID"
_WORKER_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")


def check_worker_id(value: str) -> str:
    if not _WORKER_ID.fullmatch(value):
        raise ValueError(
            f"worker id {value!r} must be 1 to 32 characters from A-Z a-z 0-9 _ - "
            f"(--worker-id / {ENV_WORKER_ID})"
        )
    return value


def worker_id(environ: Mapping[str, str] = os.environ) -> str | None:
    value = environ.get(ENV_WORKER_ID, "").strip()
    return check_worker_id(value) if value else None


def session_prefix(environ: Mapping[str, str] = os.environ) -> str:
    """What legacy session ids of this worker start with ("" outside a named fleet)."""
    value = worker_id(environ)
    return f"{value}." if value else ""
