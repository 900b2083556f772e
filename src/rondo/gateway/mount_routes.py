"""Which mounted child a parent's request belongs to: its completions and its context calls.

A `completion/complete` ref to a mounted prompt goes to its child's own completion hook under
the child's own name, one to a mounted resource or template (same URI in both) to the child
serving it: `route_completions` makes the parent's `Server.completion` that router, keeping
the parent's own hook behind it. A mounted component's context calls (`ctx.user_state`)
reach its own child's: `owning_child` is what the mount's carrier (gateway/carry.py) asks.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING, Any

from .transform import UNROUTED

if TYPE_CHECKING:
    from ..server.server import Server
    from .mount import Mount


async def _complete_routed(mounts: Callable[[], Collection[Mount]], own: Any, ref: Any,
                           argument: Any, context: Any) -> Any:
    """The parent's completion hook once a child has one: a ref to a mounted prompt goes to its
    child under the child's own name; a ref to a mounted resource or template (same URI in
    both) to the child serving it; anything else to the parent's own hook, if it had one."""
    target: Server | None = None
    if isinstance(ref, dict) and ref.get("type") == "ref/prompt":
        name = str(ref.get("name", ""))
        for made in mounts():
            if name in made._prompts:
                target, ref = made.child, {**ref, "name": made.origin.get(name, name)}
                break
    elif isinstance(ref, dict) and ref.get("type") == "ref/resource":
        uri = ref.get("uri")
        for made in () if uri == UNROUTED.get() else mounts():
            if uri in made._resources or uri in made._templates:
                target = made.child
                break
    hook = own if target is None else target.completion_handler
    if hook is None:
        return []
    value = hook(ref, argument, context)
    if inspect.isawaitable(value):
        value = await value
    return value


def route_completions(parent: Server, mounts: Callable[[], Collection[Mount]]) -> None:
    """Make the parent's completion hook the router over its mounts (once), keeping its own
    hook behind it."""
    current = parent.completion_handler
    if current is not None and current is parent.__dict__.get("_rondo_gateway_router"):
        return

    async def routed(ref: Any, argument: Any, context: Any) -> Any:
        return await _complete_routed(mounts, current, ref, argument, context)

    parent.__dict__["_rondo_gateway_router"] = routed  # as mount.py keeps its table of mounts
    parent.completion(routed)


def owning_child(mounts: Iterable[Mount], ctx: Any) -> Server | None:
    """The mounted child whose tool, prompt or resource `ctx`'s request runs (None: the
    parent's own): what routes a child's context calls (`ctx.user_state`) to its own."""
    method, params = ctx.request_method, ctx.request_params
    key = params.get("uri" if method == "resources/read" else "name")
    if not isinstance(key, str):
        return None
    kind = {"tools/call": "tool", "prompts/get": "prompt", "resources/read": "resource"}.get(method)
    if kind is None:
        return None
    for made in mounts:
        if made.owns(kind, key) or (kind == "resource" and _templated(made, key)):
            return made.child
    return None


def _templated(made: Mount, uri: str) -> bool:
    for template in made._templates:
        found = made.parent.templates.get(template)
        if found is not None and found.template is not None and found.template.match(uri):
            return True
    return False
