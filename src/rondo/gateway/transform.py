"""What a mount brings in, and as what: rename, hide, re-describe, filter by tags, and show a
component only to some principals (`mount(..., rename=, hide=, describe=, tags=, visible=)`).

Names are rewritten once, in the parent's tables, so every surface that carries one agrees:
`tools/list` and `tools/call`, `prompts/list` and `prompts/get`, `Mcp-Name` (the HTTP
transport checks it against the new name), completion refs (routed back to the child under its
own name). Resource URIs are never renamed (gateway/mount.py says why); they can be hidden,
re-described, filtered by tags and shown per principal.

Tags: the component's own `tags=` (`@server.tool(tags={"public"})`), or, for a proxied
upstream's component, the `tags` FastMCP puts in `_meta._fastmcp` (the proxy registers them as
its `tags=`). `@rondo.gateway.tags(...)` on a handler is a deprecated alias, still honoured.

Per-principal visibility: `visible(principal, kind, name)` (kind "tool", "prompt" or
"resource"; name the child's own; principal the request's verified `rondo.auth.Principal`, or
None) leaves a component out of that caller's lists and answers its calls as if it did not
exist (-32602 "Unknown tool: ...", "Unknown prompt: ...", "Resource not found"). Lists filtered this way are marked `cacheScope: private`.
Completion refs to hidden prompts and resources, legacy `resources/subscribe` and the updates a
listen stream delivers are covered the same way (`Visibility`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Collection, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from ..auth.principal import Principal
from ..server.method import Handler, Wrap
from ..wire.errors import McpError, resource_not_found
from .quiet import Quiet

if TYPE_CHECKING:
    from ..core.core import Core
    from ..server.request import Request
    from .mount import Mount

Visible = Callable[[Principal | None, str, str], bool]
# The resource URI a `completion/complete` names that its caller may not see: the mounts'
# completion router (gateway/mount.py) then treats it as served by no mount.
UNROUTED: ContextVar[str | None] = ContextVar("rondo_gateway_unrouted", default=None)
F = TypeVar("F", bound=Callable[..., Any])
_TAGS_ATTR = "__rondo_tags__"
_UNKNOWN = {"tool": "Unknown tool", "prompt": "Unknown prompt"}


def tags(*names: str) -> Callable[[F], F]:
    """Deprecated: pass `tags=` to `@server.tool`, `@server.prompt` or `@server.resource`.
    Still honoured (its tags join the component's), with a `DeprecationWarning`."""
    warnings.warn("rondo.gateway.tags(...) is deprecated: pass tags= to the server's decorator",
                  DeprecationWarning, stacklevel=2)
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ValueError("tags(...) takes one or more non-empty strings")

    def mark(fn: F) -> F:
        setattr(fn, _TAGS_ATTR, frozenset(getattr(fn, _TAGS_ATTR, ())) | frozenset(names))
        return fn

    return mark


def tags_of(component: Any) -> frozenset[str]:
    """A component's tags: its `tags=`, plus the deprecated `@tags` on its handler."""
    own: frozenset[str] = getattr(component, "tags", frozenset())
    marked = getattr(getattr(component, "fn", None), _TAGS_ATTR, None)
    return own | marked if marked else own


def upstream_tags(meta: Any) -> frozenset[str]:
    """The tags an upstream's component carries on the wire: FastMCP's `_meta._fastmcp.tags`
    (the only convention in use; the spec has no tags field). Anything malformed is no tag."""
    theirs = meta.get("_fastmcp") if isinstance(meta, Mapping) else None
    listed = theirs.get("tags") if isinstance(theirs, Mapping) else None
    if not isinstance(listed, list):
        return frozenset()
    return frozenset(t for t in listed if isinstance(t, str) and t and t == t.strip())


@dataclass(frozen=True)
class Transform:
    """A mount's transforms, checked when mounting (`mount(...)` builds it from its keywords)."""

    rename: Mapping[str, str] = field(default_factory=dict)
    hide: frozenset[str] = frozenset()
    describe: Mapping[str, str] = field(default_factory=dict)
    tags: frozenset[str] | None = None
    visible: Visible | None = None

    @classmethod
    def of(cls, rename: Mapping[str, str] | None, hide: Collection[str] | None,
           describe: Mapping[str, str] | None, tags: Collection[str] | None,
           visible: Visible | None) -> Transform:
        for what, table in (("rename", rename), ("describe", describe)):
            if table is not None and (not isinstance(table, Mapping) or not all(
                    isinstance(k, str) and isinstance(v, str) for k, v in table.items())):
                raise TypeError(f"{what}= maps names to strings")
        for what, names in (("hide", hide), ("tags", tags)):
            if names is not None and (isinstance(names, str) or not all(
                    isinstance(n, str) for n in names)):
                raise TypeError(f"{what}= is a collection of strings")
        if rename and len(set(rename.values())) != len(rename):
            raise ValueError("rename= gives two components the same name")
        if visible is not None and not callable(visible):
            raise TypeError("visible= is a callable (principal, kind, name) -> bool")
        return cls(dict(rename or {}), frozenset(hide or ()), dict(describe or {}),
                   None if tags is None else frozenset(tags), visible)

    def admits(self, name: str, component: Any) -> bool:
        """Whether a child's component (by its own name or URI) is brought in at all."""
        if name in self.hide:
            return False
        return self.tags is None or bool(self.tags & tags_of(component))

    def wire(self, wire: dict[str, Any], name: str) -> dict[str, Any]:
        """The component's wire entry with its description replaced, if asked."""
        described = self.describe.get(name)
        return wire if described is None else {**wire, "description": described}

    def guard(self, kind: str, name: str, shown_as: str) -> tuple[Any, ...]:
        """Component middleware refusing callers `visible` does not show it to."""
        visible = self.visible
        if visible is None:
            return ()
        label = f"{_UNKNOWN.get(kind)}: {shown_as}"

        async def only_for_the_visible(request: Any, call_next: Any) -> Any:
            if not visible(_principal(request.auth), kind, name):
                # as the core answers for what does not exist, so existence does not leak
                raise resource_not_found(shown_as) if kind == "resource" else McpError(
                    -32602, label)
            return await call_next(request)

        return (only_for_the_visible,)


def _principal(auth: Any) -> Principal | None:
    return auth if isinstance(auth, Principal) else None


class Visibility(Quiet):
    """The parent's list filter for mounts with `visible=`: an extension that advertises
    nothing and wraps the four list methods, `completion/complete` and `resources/subscribe`. Installed on a parent once, by its first such
    mount; a parent without one pays nothing."""

    name = "dev.rondo/gateway-visibility"
    carried = False  # made per parent: a mount's `hidden_from` and `hides` look below it

    def __init__(self, mounts: Callable[[], Collection[Mount]]) -> None:
        self._mounts = mounts

    def wraps(self) -> list[Wrap]:
        return [Wrap("tools/list", self._list("tools", "tool")),
                Wrap("prompts/list", self._list("prompts", "prompt")),
                Wrap("resources/list", self._list("resources", "resource")),
                Wrap("resources/templates/list", self._list("resourceTemplates", "resource")),
                Wrap("completion/complete", self._complete),
                Wrap("resources/subscribe", self._subscribe),
                Wrap("subscriptions/listen", self._listen)]

    def _hidden(self, req: Request, kind: str) -> set[str]:
        principal = _principal(req.auth)
        hidden: set[str] = set()
        for made in self._mounts():
            hidden |= made.hidden_from(principal, kind)
        return hidden

    async def _complete(self, core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
        """A ref to a prompt the caller may not see is refused as an unknown prompt is; a ref
        to a hidden resource or template is not routed to its child (answered as for a URI
        no mount serves), so completion does not tell hidden components apart."""
        ref = req.params.get("ref")
        if isinstance(ref, dict) and ref.get("type") == "ref/prompt" \
                and ref.get("name") in self._hidden(req, "prompt"):
            raise McpError(-32602, f"Unknown prompt: {ref.get('name')}")
        if isinstance(ref, dict) and ref.get("type") == "ref/resource" \
                and ref.get("uri") in self._hidden(req, "resource"):
            token = UNROUTED.set(str(ref.get("uri")))
            try:
                return await call_next(core, req)
            finally:
                UNROUTED.reset(token)
        return await call_next(core, req)

    async def _listen(self, core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
        """A 2026-07-28 listen stream is acknowledged as asked (a hidden URI is echoed as an
        unserved one is), but a `resources/updated` for a URI hidden from its caller, at the
        time it is sent, is not delivered: exact URIs, URIs below a subscribed prefix, and URIs
        a hidden template matches alike."""
        principal, emit, mounts = _principal(req.auth), req.emit, self._mounts

        def only_visible(message: dict[str, Any]) -> None:
            if message.get("method") == "notifications/resources/updated":
                uri = message.get("params", {}).get("uri")
                if any(made.hides(principal, uri) for made in mounts()):
                    return
            emit(message)

        again = type(req)(req.id, req.method, req.params, req.env, req.dialect,
                          emit=only_visible, auth=req.auth, call=req.call,
                          headers=req.headers, peer=req.peer)
        return await call_next(core, again)

    async def _subscribe(self, core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
        """A 2025-11-25 subscription to a hidden resource (or a URI a hidden template matches) is
        answered as one to a URI the server does not serve (`{}`), and not recorded. One that
        is recorded (a prefix above hidden URIs too) marks its session: the session's update
        fan-out then drops a URI hidden from this caller at the time it is sent."""
        principal, uri, mounts = _principal(req.auth), req.params.get("uri"), self._mounts
        if any(made.hides(principal, uri) for made in mounts()):
            return {}
        result = await call_next(core, req)
        session = getattr(req.call, "session", None)
        if session is not None and getattr(session, "hidden", False) is None:
            session.hidden = lambda sent: any(made.hides(principal, sent) for made in mounts())
        return result

    def _list(self, key: str, kind: str) -> Any:
        async def filtered(core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
            result = await call_next(core, req)
            principal = _principal(req.auth)
            hidden: set[str] = set()
            for made in self._mounts():
                hidden |= made.hidden_from(principal, kind)
            if not hidden:
                return result
            field_ = "uriTemplate" if key == "resourceTemplates" else (
                "uri" if kind == "resource" else "name")
            result[key] = [item for item in result.get(key, [])
                           if item.get(field_) not in hidden]
            if "cacheScope" in result:
                result["cacheScope"] = "private"
            return result

        return filtered
