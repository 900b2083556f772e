"""What a mount carries from its child besides components: the child's server-wide middleware.

`ChildMiddleware` is an extension the parent gets at its first mount of a child that has
server-wide middleware (a parent that mounts none pays nothing). It wraps `tools/call`,
`prompts/get`, `resources/read` and `completion/complete` (a ref the parent routes to a child):
a request that reaches a mounted child's component runs
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
from ..server.method import Handler, Wrap
from ..wire.errors import McpError, internal_error
from .quiet import Quiet

if TYPE_CHECKING:
    from ..core.core import Core
    from ..server.request import Request
    from .mount import Mount


class ChildMiddleware(Quiet):
    """The parent's runner of its mounted children's server-wide middleware."""

    name = "dev.rondo/gateway-child-middleware"
    carried = False  # made per parent: a grandparent's own runs a mount of a mount's (below)

    def __init__(self, mounts: Callable[[], Collection[Mount]]) -> None:
        self._mounts = mounts

    def wraps(self) -> list[Wrap]:
        return [Wrap("tools/call", self._around("tool"), tools=self._takes),
                Wrap("prompts/get", self._around("prompt")),
                Wrap("resources/read", self._around("resource")),
                Wrap("completion/complete", self._complete)]

    async def _complete(self, core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
        """A completion the parent routes to a mounted child (a ref to its prompt, resource
        or template) runs through that child's middleware, as a call of the component would;
        any other ref, the parent's own, does not."""
        ref = req.params.get("ref")
        if not isinstance(ref, Mapping):
            return await call_next(core, req)
        kind = {"ref/prompt": "prompt", "ref/resource": "resource"}.get(str(ref.get("type")))
        if kind is None:
            return await call_next(core, req)
        chain = self._chain(kind, ref.get("name" if kind == "prompt" else "uri"))
        if not chain:
            return await call_next(core, req)
        return await _run(chain, 0, core, req, call_next)

    def _takes(self, tool: Any) -> bool:
        """Only tools of a mount whose child (or grandchild...) has middleware leave the fast
        lanes."""
        return bool(self._chain("tool", tool.name))

    def _chain(self, kind: str, key: Any) -> list[tuple[Mount, Any]]:
        """The mounts a component is served through, outermost first, each with the name the
        component has in that mount's child, keeping those whose child has middleware: a mount
        of a mount runs the child's middleware, then the grandchild's."""
        found: list[tuple[Mount, Any]] = []
        mounts = self._mounts()
        while isinstance(key, str):
            made = next((m for m in mounts if m.owns(kind, key)), None)
            if made is None:
                break
            key = key if kind == "resource" else made.origin.get(key, key)
            if made.child.middleware:
                found.append((made, key))
            mounts = made.below()
        return found

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
            chain = self._chain(kind, key)
            if not chain:
                return await call_next(core, req)
            return await _run(chain, 0, core, req, call_next)

        return around


TASKS = "io.modelcontextprotocol/tasks"  # the wire name (gateway/tasks.py imports the client)


class ChildTaskMiddleware(Quiet):
    """The parent's runner of a mounted child's middleware around `tasks/get|update|cancel` of
    a task that child's tool made: installed beside the child-middleware wrap while the parent
    has a tasks extension (its rows are what it wraps), taken out with it. The tasks extension
    says which tool made a task (`tool_of(core, req, task_id)`, duck-typed: the gateway does
    not name the tasks package), one store read per poll, paid only with such a child."""

    name = "dev.rondo/gateway-child-task-middleware"
    carried = False
    METHODS = ("tasks/get", "tasks/update", "tasks/cancel")

    def __init__(self, outer: ChildMiddleware) -> None:
        self._outer = outer

    def wraps(self) -> list[Wrap]:
        return [Wrap(method, self._around) for method in self.METHODS]

    async def _around(self, core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
        tasks = core.server.extensions.get(TASKS)
        find = getattr(tasks, "tool_of", None)
        tool = None if find is None else await find(core, req, req.params.get("taskId"))
        chain = self._outer._chain("tool", tool) if isinstance(tool, str) else []
        if not chain:
            return await call_next(core, req)
        return await _run(chain, 0, core, req, call_next)


async def _run(chain: list[tuple[Mount, Any]], index: int, core: Core, req: Request,
               call_next: Handler) -> dict[str, Any]:
    """`chain[index]`'s child middleware around the rest of the chain, then the row."""
    if index == len(chain):
        return await call_next(core, req)
    made, own = chain[index]
    view = RequestView(req, core.server)
    ref = req.params.get("ref")
    if req.method == "completion/complete":  # each child's middleware sees its own name
        if isinstance(ref, Mapping) and ref.get("type") == "ref/prompt":
            object.__setattr__(view, "params", freeze({**req.params, "ref": {**ref, "name": own}}))
    elif req.method in ("tools/call", "prompts/get"):
        object.__setattr__(view, "params", freeze({**req.params, "name": own}))
    result = await run_chain(made.child.middleware, view,
                             lambda: _run(chain, index + 1, core, req, call_next))
    if not isinstance(result, dict):
        raise internal_error(f"middleware of mounted server {made.child.name!r} answered "
                             f"{req.method} with {type(result).__name__}, not a result object")
    return result
