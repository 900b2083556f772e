"""Start-up and shutdown hooks for the user's resources (a database pool, an HTTP client...).

    @server.lifespan
    async def database(server):
        pool = await open_pool()
        yield {"db": pool}          # handlers read ctx.lifespan["db"]
        await pool.close()

Hooks run in registration order at start-up and in reverse at shutdown, on the event loop that
serves requests: `run_http`/`rondo run --http` (the ASGI lifespan), `run_stdio`, a parent
framework through `lifespan=server.asgi().lifespan`, or `async with server.started():` in tests.
Entering it again while it runs (a parent app and the mounted app both asking) is a no-op.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any


class MissingLifespanValue(KeyError):
    """Rondo's own advice on a missing `ctx.lifespan` value: shown even when errors are masked."""

    public = True


class LifespanState(dict[str, Any]):
    """What the hooks yielded, merged; a missing key says why it may be missing."""

    def __missing__(self, key: str) -> Any:
        raise MissingLifespanValue(
            f"{key!r} is not in ctx.lifespan: no lifespan hook provided it, or the server's "
            "lifespan is not running (run_http and run_stdio run it; mounted in a framework, pass "
            "lifespan=mcp.lifespan to the parent app; in tests, `async with server.started():`)"
        )


Hook = Callable[[Any], Any]


class Lifespan:
    __slots__ = ("hooks", "state", "_depth", "_stack")

    def __init__(self) -> None:
        self.hooks: list[Hook] = []
        self.state = LifespanState()
        self._depth = 0
        self._stack: contextlib.AsyncExitStack | None = None

    def add(self, hook: Hook) -> None:
        if not callable(hook):
            raise TypeError("a lifespan hook is a function taking the server")
        self.hooks.append(hook)

    @contextlib.asynccontextmanager
    async def running(self, server: Any) -> AsyncIterator[Mapping[str, Any]]:
        if self._depth:
            self._depth += 1
            try:
                yield self.state
            finally:
                self._depth -= 1
            return
        self._depth = 1
        try:
            async with contextlib.AsyncExitStack() as stack:
                for hook in self.hooks:
                    value = await stack.enter_async_context(_as_context(hook, server))
                    if value is None:
                        continue
                    if not isinstance(value, Mapping):
                        raise TypeError(
                            f"lifespan hook {getattr(hook, '__name__', hook)!r} must yield a dict "
                            f"of names to resources (or nothing), got {type(value).__name__}"
                        )
                    self.state.update(value)
                yield self.state
        finally:
            self.state.clear()
            self._depth = 0


def _as_context(hook: Hook, server: Any) -> Any:
    if inspect.isasyncgenfunction(hook):
        return contextlib.asynccontextmanager(hook)(server)
    made = hook(server)
    if hasattr(made, "__aenter__"):
        return made  # an async context manager of the user's own
    raise TypeError(
        f"lifespan hook {getattr(hook, '__name__', hook)!r} must be an async generator function "
        "(`async def hook(server): ...; yield {...}`) or return an async context manager"
    )
