"""Middleware: `async (request, call_next)` around every request the core answers. Here, what
authoring needs (the types, the start-up check); the view and the chain are the kernel's
(`rondo.core.middleware`).

Server middleware (`Server(middleware=[...])`) wraps the method handler in `Core.dispatch`; it
receives a `RequestView` and returns the result dict (or raises `McpError`). Per-component
middleware (`@server.tool(middleware=[...])`) wraps the call of the user's function inside
`Core.invoke` and returns what that function returned (a value, or `InputRequired`), so the
framework still shapes and validates the final result after it.

What middleware sees is a read-only view built from the framework's own `Request`: frozen
copies of the params and of what the client declared. The core never reads the view back except
its one writable field, `extras` (handed to the handler as `ctx.extras`), so no middleware can
widen the client's capabilities or rewrite `inputResponses`, `requestState`, the method or the
params: admission keeps checking what the request itself declared.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core.middleware import RequestView

CallNext = Callable[..., Awaitable[Any]]
Middleware = Callable[["RequestView", CallNext], Awaitable[Any]]


def check_middleware(chain: Sequence[Any] | None, what: str) -> tuple[Middleware, ...]:
    """Refuse a bad middleware list at start-up, not at request time."""
    if chain is None:
        return ()
    if isinstance(chain, str | bytes) or not isinstance(chain, Sequence):
        raise TypeError(f"{what}: middleware must be a list of async callables")
    import inspect

    for mw in chain:
        # A coroutine function (or a partial of one), or an object with an async __call__.
        method = getattr(type(mw), "__call__", None)  # noqa: B004 - the class's, not callable()
        if not (inspect.iscoroutinefunction(mw) or inspect.iscoroutinefunction(method)):
            raise TypeError(f"{what}: middleware {mw!r} must be an async callable (request, call_next)")
    return tuple(chain)


__all__ = ["CallNext", "Middleware", "check_middleware"]
