"""What `Server.extension(...)` takes. A protocol for type checkers only: defining a Protocol
class costs a stdio server's cold start, so `server.py` imports this under TYPE_CHECKING."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .method import Method
    from .server import Server


class Extension(Protocol):
    """A protocol extension: methods for the table and a capability to advertise.

    `name` is its identifier (e.g. `io.modelcontextprotocol/tasks`); `methods()` the rows it
    adds to the method table; `capability(server)` what to advertise under
    `capabilities.extensions[name]`, or None to advertise nothing (yet).

    Optional hooks, looked up by name: `attach(server)`, called once when installed (to
    register resources, say); `context_calls()` -> {name: fn(ctx, ...)} for the `Context`
    methods it serves (`ctx.start_task`, `ctx.user_state`), `server_calls()` for `Server`'s
    (`emit`); `tool_options`, the tool options it serves (`("task",)`; `Server.settle()`
    installs a registered default for an option nothing installed serves, `defaults.py`);
    the fleet hooks `fleet_problem(server) -> str | None` and `use_redis(url)` (`rondo.fleet`);
    `detach(server)`, called by `server.remove_extension(name)`. How `rondo.gateway.mount`
    carries it into a parent: `hub()` (it merges: the parent's one instance of it, made from
    the first child's, takes each child's in with `join(namespace, member)`, raising
    ValueError on a conflict, and lets it go with `leave(namespace)`); without `hub()` the
    parent shares the child's own instance; `carried = False` keeps it out.
    """

    name: str

    def methods(self) -> Iterable[Method]: ...

    def capability(self, server: Server) -> Mapping[str, Any] | None: ...
