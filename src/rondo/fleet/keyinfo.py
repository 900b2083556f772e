"""What a worker may say about its state keys: ids and fingerprints, never a secret.

A fingerprint is a truncated HMAC of a fixed label under the secret (the same one a bare
`secret=` already puts in every token's key-id field), so two workers agree on a fingerprint
exactly when they hold the same secret, and nothing about the secret can be read from it.
`rondo keys check URL...` (`keycheck.py`) compares these reports across a fleet.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..server.server import Server

REPORT_PATH = "/.well-known/rondo/keys"


def key_report(server: Server, worker: str | None = None) -> dict[str, Any]:
    """A JSON-ready description of this worker's keyring (safe to show an operator)."""
    report: dict[str, Any] = {"server": server.name, "pid": os.getpid()}
    if worker:
        report["worker"] = worker
    policy = server.state_policy
    if policy is None:
        report["state"] = "off"
        return report
    ring = policy.keyring
    ids = ring.ids or (ring.signing_id,)
    report.update({
        "state": "random per-process key" if policy.ephemeral else "shared keys",
        "ephemeral": policy.ephemeral,
        "signing": ring.signing_id,
        "keys": [{"id": key_id, "fingerprint": _fingerprint(ring, key_id)} for key_id in ids],
        "replay": type(policy.replay_store).__name__,
    })
    return report


def _fingerprint(ring: Any, key_id: str) -> str:
    key = ring.lookup(key_id)
    return key.fingerprint if key is not None else "?"
