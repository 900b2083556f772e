"""What a mount carries from its child besides components: the child's server-wide middleware.

`ChildMiddleware` is an extension the parent gets at its first mount of a child that has
server-wide middleware (a parent that mounts none pays nothing). It wraps `tools/call`,
`prompts/get` and `resources/read`: a request that reaches a mounted child's component runs
through that child's middleware, in the child's order, inside the parent's own middleware
(which wraps the whole row); the parent's own components and other mounts' do not see it.

The child's middleware sees the request as its own server would: the tool or prompt name is
the child's own (not the namespaced one); everything else (era, auth, principal, `extras`) is
the parent's request. It answers a result object, as server-wide middleware does.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

from ..core.middleware import RequestView, freeze, run_chain
from ..server.method import Handler, Method, Wrap
from ..wire.errors import McpError, internal_error

if TYPE_CHECKING:
    from ..core.core import Core
    from ..server.request import Request
    from ..server.server import Server
    from .mount import Mount


class ChildMiddleware:
    """The parent's runner of its mounted children's server-wide middleware."""

    name = "dev.rondo/gateway-child-middleware"

    def __init__(self, mounts: Callable[[], Collection[Mount]]) -> None:
        self._mounts = mounts

    def capability(self, server: Server) -> Mapping[str, Any] | None:
        return None

    def methods(self) -> Collection[Method]:
        return ()

    def wraps(self) -> list[Wrap]:
        return [Wrap("tools/call", self._around("tool"), tools=self._takes),
                Wrap("prompts/get", self._around("prompt")),
                Wrap("resources/read", self._around("resource"))]

    def _takes(self, tool: Any) -> bool:
        """Only tools of a mount whose child has middleware leave the fast lanes."""
        return self._owner("tool", tool.name) is not None

    def _owner(self, kind: str, key: Any) -> Mount | None:
        if not isinstance(key, str):
            return None
        for made in self._mounts():
            if made.child.middleware and made.owns(kind, key):
                return made
        return None

    def _around(self, kind: str) -> Any:
        async def around(core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
            if kind == "resource":
                uri = req.params.get("uri")
                try:
                    found = core.find_resource(uri)[0] if isinstance(uri, str) else None
                except McpError:
                    found = None  # the row words the refusal
                key: Any = None if found is None else found.uri
            else:
                key = req.params.get("name")
            made = self._owner(kind, key)
            if made is None:
                return await call_next(core, req)
            view = RequestView(req, core.server)
            if kind != "resource":  # the child's middleware sees its own name
                object.__setattr__(view, "params",
                                   freeze({**req.params, "name": made.origin.get(key, key)}))
            result = await run_chain(made.child.middleware, view, lambda: call_next(core, req))
            if not isinstance(result, dict):
                raise internal_error(f"middleware of mounted server {made.child.name!r} answered "
                                     f"{req.method} with {type(result).__name__}, not a result "
                                     "object")
            return result

        return around
