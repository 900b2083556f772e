"""The tasks extension (`io.modelcontextprotocol/tasks`), both sides: the public names.

Server: `Tasks` (the extension), `MemoryTaskStore`, `RedisTaskStore` (the `redis` extra),
`TaskStore` (the interface), `TaskCancelled`. Client: `TasksClient` (what `Client(tasks=True)`
installs), `TaskHandle` (poll, update, cancel, resume by id). See docs/tasks.md.
"""

from __future__ import annotations

from typing import Any

from .server.tasks import EXTENSION, MemoryTaskStore, TaskCancelled, TaskRecord, Tasks, TaskStore

_LAZY = {
    "RedisTaskStore": "rondo.server.tasks.redis_store",
    "TasksClient": "rondo.client.tasks",
    "TaskHandle": "rondo.client.tasks",
    "TaskFailed": "rondo.client.tasks",
    "TaskWasCancelled": "rondo.client.tasks",
}


def __getattr__(name: str) -> Any:
    import importlib

    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'rondo.tasks' has no attribute {name!r}")


__all__ = ["EXTENSION", "MemoryTaskStore", "TaskCancelled", "TaskRecord", "TaskStore", "Tasks", *_LAZY]
