"""What `client.task(id)` and `client.start_tool(...)` return, for type checkers only.

The tasks extension's client half implements it (`rondo`'s own: its `TaskHandle`); the client
layer names only this shape, never the package. Imported under TYPE_CHECKING: a Protocol class
costs a cold start.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .session import Client
    from .types import CallToolResult

Json = dict[str, Any]


class TaskHandle(Protocol):
    """One task on the server: `last` is the latest state seen, `status` its status."""

    client: Client
    task_id: str
    last: Json

    @property
    def status(self) -> str: ...

    async def get(self) -> Json: ...

    async def update(self, responses: Mapping[str, Any]) -> None: ...

    async def cancel(self) -> None: ...

    async def wait(self, *, on_status: Callable[[Json], Any] | None = None,
                   answer: bool = True) -> CallToolResult: ...

    async def wait_raw(self, *, on_status: Callable[[Json], Any] | None = None,
                       answer: bool = True) -> Json: ...
