"""The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663), both sides: the public names.

Server: `Tasks` (the extension; install with `server.extension(Tasks(...))`),
`MemoryTaskStore`, `RedisTaskStore` (the `redis` extra), `TaskStore` (the interface),
`TaskCancelled`. A tool opts in with `@server.tool(task="optional" | "required")` and starts
its task with `ctx.start_task()`. Client: `TasksClient` (what `Client(tasks=True)` installs),
`TaskHandle` (poll, update, cancel, resume by id). See docs/tasks.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .extension import Tasks, declares_tasks
from .record import EXTENSION, TaskRecord
from .runtime import TaskCancelled
from .store import MemoryTaskStore, TaskStore

if TYPE_CHECKING:
    from .client import TaskFailed, TaskHandle, TasksClient, TaskWasCancelled
    from .redis_store import RedisTaskStore

_LAZY = {
    "RedisTaskStore": "rondo.tasks.redis_store",  # imports the redis client only when asked for
    "TasksClient": "rondo.tasks.client",
    "TaskHandle": "rondo.tasks.client",
    "TaskFailed": "rondo.tasks.client",
    "TaskWasCancelled": "rondo.tasks.client",
}


def __getattr__(name: str) -> Any:
    import importlib

    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'rondo.tasks' has no attribute {name!r}")


__all__ = ["EXTENSION", "MemoryTaskStore", "RedisTaskStore", "TaskCancelled", "TaskFailed",
           "TaskHandle", "TaskRecord", "TaskStore", "TaskWasCancelled", "Tasks", "TasksClient",
           "declares_tasks"]
