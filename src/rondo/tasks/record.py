"""One task as the store keeps it, and its wire forms (`CreateTaskResult`, `DetailedTask`).

A record is plain JSON (msgspec) so every store, in memory or Redis, keeps the same bytes and
any replica can read what another wrote.
"""

from __future__ import annotations

import datetime
import hashlib
from typing import Any

import msgspec

from ..wire.errors import SERVER_BUSY, McpError

EXTENSION = "io.modelcontextprotocol/tasks"
WORKING = "working"
INPUT_REQUIRED = "input_required"
COMPLETED = "completed"
CANCELLED = "cancelled"
FAILED = "failed"
TERMINAL = frozenset({COMPLETED, CANCELLED, FAILED})


class TaskRecord(msgspec.Struct, kw_only=True):
    """`requests` are the outstanding input requests (wire keys), `answers` the responses a
    `tasks/update` delivered that the worker has not taken yet, `used` every key ever issued
    (keys are unique over a task's life). `lease` is when the worker's claim runs out (epoch
    seconds); `cancel` records a `tasks/cancel` for the worker to see. `trace` is the
    creating span's context (tracing only, `Tracer.task_origin`); left out of the JSON when
    unset, and typed loosely so a damaged value still decodes (the tracer ignores it).
    `client` is whom the task counts against for the per-client quota: the principal's digest,
    or for an anonymous request the digest of its network peer (None: anonymous over a pipe).
    `tool` names the tool whose call made it (a gateway routes the task's polls through the
    middleware of the mounted server that tool came from); None in records made before it."""

    id: str
    principal: str | None
    status: str = WORKING
    created: float
    updated: float
    ttl_ms: int | None
    poll_ms: int
    message: str | None = None
    requests: dict[str, Any] = msgspec.field(default_factory=dict)
    answers: dict[str, Any] = msgspec.field(default_factory=dict)
    used: list[str] = msgspec.field(default_factory=list)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    cancel: bool = False
    lease: float | None = None
    worker: str | None = None
    client: str | None = None
    trace: Any = msgspec.UNSET
    tool: str | None = None  # the tool (as the server serves it) whose call made the task

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def expires_at(self) -> float | None:
        return None if self.ttl_ms is None else self.created + self.ttl_ms / 1000


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(TaskRecord)


def encode(record: TaskRecord) -> bytes:
    return _encoder.encode(record)


def decode(raw: bytes | str) -> TaskRecord:
    return _decoder.decode(raw)


def principal_digest(principal: str | None) -> str | None:
    """What a record keeps of its principal: a digest, so a dump of the store names nobody."""
    if principal is None:
        return None
    return hashlib.sha256(principal.encode()).hexdigest()


def client_digest(principal: str | None, peer: Any) -> str | None:
    """Whom a task counts against: the principal, else the HTTP peer's host, else nobody."""
    if principal is not None:
        return principal_digest(principal)
    if isinstance(peer, list | tuple) and peer and isinstance(peer[0], str):
        return principal_digest("\0peer:" + peer[0])
    return None


def too_many_for_client(limit: int) -> McpError:
    return McpError(SERVER_BUSY, f"Too many unfinished tasks for this client (limit {limit}, "
                                 "max_per_client): let one finish or cancel one")


def too_many_on_server(limit: int, name: str = "max_tasks") -> McpError:
    return McpError(SERVER_BUSY, f"Too many unfinished tasks on this server (limit {limit}, "
                                 f"{name}); try again later")


def iso(t: float) -> str:
    stamp = datetime.datetime.fromtimestamp(t, datetime.UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def task_wire(record: TaskRecord) -> dict[str, Any]:
    """The `Task` fields every task message carries (the `CreateTaskResult` body)."""
    wire: dict[str, Any] = {
        "taskId": record.id,
        "status": record.status,
        "createdAt": iso(record.created),
        "lastUpdatedAt": iso(record.updated),
        "ttlMs": record.ttl_ms,
        "pollIntervalMs": record.poll_ms,
    }
    if record.message is not None:
        wire["statusMessage"] = record.message
    return wire


def detailed_wire(record: TaskRecord) -> dict[str, Any]:
    """A `DetailedTask`: the task plus what its status inlines."""
    wire = task_wire(record)
    if record.status == INPUT_REQUIRED:
        wire["inputRequests"] = dict(record.requests)
    elif record.status == COMPLETED and record.result is not None:
        wire["result"] = record.result
    elif record.status == FAILED:
        wire["error"] = record.error or {"code": -32603, "message": "Task failed"}
    return wire
