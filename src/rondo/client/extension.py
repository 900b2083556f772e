"""What a client-side extension brings (`Client(extensions=[...])`), and the callback types the
`Client` takes: a progress callback, an extension's handler of a result type of its own."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from rondo.client.transports import Json

if TYPE_CHECKING:
    from .session import Client

ProgressCallback = Callable[[float, float | None, str | None], Any]
# An extension's handling of a result type of its own: `async (client, method, params, result)`
# returns the final result dict of the call (e.g. by polling a task until it ends).
ResultHandler = Callable[["Client", str, Json, Json], Awaitable[Json]]


class ClientExtension(Protocol):
    """What a client-side protocol extension brings: `name` (declared under
    `capabilities.extensions[name]` with `capability`), and `result_types`, the `resultType`
    values it handles and how."""

    name: str
    capability: Mapping[str, Any]
    result_types: Mapping[str, ResultHandler]
    # Optional, looked up by name: `on_call_tool(client, name, params)` -> a `CallToolResult`
    # when it answered the call itself (a 2025-11-25 task), or None to let it go as usual.
