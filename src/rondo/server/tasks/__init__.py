"""The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the server.

`Tasks` is the extension (install with `server.extension(Tasks(...))`), `MemoryTaskStore`
and `RedisTaskStore` the two stores, `TaskStore` their interface. A tool opts in with
`@server.tool(task="optional" | "required")` and starts its task with `ctx.start_task()`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .extension import Tasks, declares_tasks
from .record import EXTENSION, TaskRecord
from .runtime import TaskCancelled
from .store import MemoryTaskStore, TaskStore

if TYPE_CHECKING:
    from .redis_store import RedisTaskStore


def __getattr__(name: str) -> Any:
    if name == "RedisTaskStore":  # imports the redis client only when asked for
        from .redis_store import RedisTaskStore

        return RedisTaskStore
    raise AttributeError(name)


__all__ = ["EXTENSION", "MemoryTaskStore", "RedisTaskStore", "TaskCancelled", "TaskRecord",
           "TaskStore", "Tasks", "declares_tasks"]
