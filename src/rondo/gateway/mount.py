"""`mount(parent, child, namespace=...)`: another `rondo.Server`'s components served by this one.

The child's tools and prompts appear in the parent as `<namespace>_<name>`; its resources and
templates keep their URIs (a URI is an identity other surfaces carry: resource links in
results, `_meta` keys such as `ui://` resource URIs, subscriptions; rewriting one and missing
another breaks reads, so URIs are left alone and a clash is refused when mounting).

The components run in the parent: the parent's core, dialects and state policy answer every
request, so `ctx.ask`, `InputRequired` and legacy back-channel questions work as they do for
the parent's own tools, with every round sealed by the parent's policy. The mount follows the
child (`Server.on_change`): a component added to or removed from the child later is brought in
or dropped, and the parent's listeners hear `list_changed`. The child's lifespan hooks run
inside the parent's lifespan.

Which child a parent's completion or context call belongs to is gateway/mount_routes.py; the
wraps a parent gets for its mounts' `visible=` and middleware, gateway/mount_wraps.py.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Collection, Mapping
from typing import Any

from ..server.components import Prompt, Resource, Tool
from ..server.server import Server
from .carry import Carrier
from .mount_routes import owning_child, route_completions
from .mount_wraps import install_wraps
from .transform import Transform, Visible, tags_of

SEPARATOR = "_"
# No `_` in a namespace: the separator then splits a mounted name one way only (`a_b` + `c`
# and `a` + `b_c` would both be `a_b_c`). The rest is the tool-name alphabet, spec tools.mdx.
_NAMESPACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,63}")
_MAX_NAME = 128  # tool names are 1-128 characters (spec tools.mdx)
_NAMESPACE_FREE = re.compile(r"[A-Za-z0-9_.-]{1,128}")


class Mount:
    """One child mounted under a namespace; `unmount()` takes its components out again."""

    def __init__(self, parent: Server, child: Server, namespace: str,
                 transform: Transform | None = None) -> None:
        self.parent = parent
        self.child = child
        self.namespace = namespace
        self.transform = transform or Transform()
        # parent name -> the child's own, for tools and prompts (completion refs, visibility)
        self.origin: dict[str, str] = {}
        self._tools: set[str] = set()
        self._prompts: set[str] = set()
        self._resources: set[str] = set()
        self._templates: set[str] = set()
        self._live = True
        self.carrier = Carrier.of(parent, lambda ctx: owning_child(_mounts(parent).values(), ctx))

    def name(self, name: str) -> str:
        """The name a child's tool or prompt has in the parent (after `rename=`)."""
        return f"{self.namespace}{SEPARATOR}{self.transform.rename.get(name, name)}"

    def below(self) -> list[Mount]:
        """The mounts on this mount's child (a mount of a mount)."""
        return list(_mounts(self.child).values())

    def hidden_from(self, principal: Any, kind: str) -> set[str]:
        """The parent names (URIs for resources) of this mount's components of `kind` that
        `visible=` does not show `principal`: its own `visible=`, or that of a mount on its
        child (a grandchild's component the child hides is hidden here too)."""
        visible = self.transform.visible
        hidden: set[str] = set()
        below: set[str] = set()
        for made in self.below():
            below |= made.hidden_from(principal, kind)
        if kind == "resource":
            if visible is not None:
                hidden = {uri for uri in (*self._resources, *self._templates)
                          if not visible(principal, kind, uri)}
            return hidden | {uri for uri in below
                             if uri in self._resources or uri in self._templates}
        mine = self._tools if kind == "tool" else self._prompts
        if visible is None and not below:
            return hidden
        return {name for name in mine if self.origin.get(name, name) in below or (
            visible is not None and not visible(principal, kind, self.origin.get(name, name)))}

    def serves(self, uri: Any) -> bool:
        """Whether this mount brings the child's resource `uri` into the parent: one of its
        static resources, or a URI one of its templates matches (not one `hide=` or `tags=`
        left out)."""
        if not isinstance(uri, str):
            return False
        if uri in self._resources:
            return True
        return any((found := self.parent.templates.get(template)) is not None
                   and found.template is not None and found.template.match(uri) is not None
                   for template in self._templates)

    def hides(self, principal: Any, uri: Any) -> bool:
        """Whether `visible=` hides a resource URI from `principal`: one of this mount's static
        resources, or a URI one of its templates matches."""
        visible = self.transform.visible
        if not isinstance(uri, str):
            return False
        if any(made.hides(principal, uri) for made in self.below()) and self.serves(uri):
            return True
        if visible is None:
            return False
        if uri in self._resources:
            return not visible(principal, "resource", uri)
        return any(not visible(principal, "resource", template)
                   for template in self._templates
                   if (found := self.parent.templates.get(template)) is not None
                   and found.template is not None and found.template.match(uri) is not None)
    def owns(self, kind: str, key: str) -> bool:
        """Is `key` (a parent tool or prompt name, a resource URI or template) this mount's?"""
        if kind == "tool":
            return key in self._tools
        if kind == "prompt":
            return key in self._prompts
        return key in self._resources or key in self._templates

    # -- bringing components in ---------------------------------------------------------------

    def sync(self, what: str) -> None:
        """Make the parent's table of `what` ("tools", "prompts", "resources") match the child's."""
        if what == "tools":
            self._sync_tools()
            self.parent.notify_tools_changed()
        elif what == "prompts":
            self._sync_prompts()
            self.parent.notify_prompts_changed()
        elif what == "resources":
            self._sync_resources()
            self.parent.notify_resources_changed()

    def _sync_tools(self) -> None:
        parent, scopes = self.parent, self.parent.component_scopes
        for name in self._tools:
            parent.tools.pop(name, None)
            scopes.pop(("tool", name), None)
        self._tools = set()
        shape = self.transform
        for tool in list(self.child.tools.values()):
            if not shape.admits(tool.name, tool):
                continue
            name = self.name(tool.name)
            wire = {**shape.wire(tool.wire, tool.name), "name": name}
            made = parent.tools[name] = Tool(name, tool.fn, tool.signature, wire, tool.task,
                                             shape.guard("tool", tool.name, name)
                                             + tool.middleware, tags_of(tool))
            made.relay = tool.relay  # a proxied tool relays under its new name too
            self._tools.add(name)
            self.origin[name] = tool.name
            self._copy_scopes("tool", tool.name, name)
            if tool.task is not None and parent.serving:
                parent.settle()  # as for its own: a task tool arriving while serving

    def _sync_prompts(self) -> None:
        parent, scopes = self.parent, self.parent.component_scopes
        for name in self._prompts:
            parent.prompts.pop(name, None)
            scopes.pop(("prompt", name), None)
        self._prompts = set()
        shape = self.transform
        for prompt in list(self.child.prompts.values()):
            if not shape.admits(prompt.name, prompt):
                continue
            name = self.name(prompt.name)
            wire = {**shape.wire(prompt.wire, prompt.name), "name": name}
            parent.prompts[name] = Prompt(name, prompt.fn, prompt.signature, wire,
                                          shape.guard("prompt", prompt.name, name)
                                          + prompt.middleware, tags_of(prompt))
            self._prompts.add(name)
            self.origin[name] = prompt.name
            self._copy_scopes("prompt", prompt.name, name)

    def _sync_resources(self) -> None:
        parent, scopes = self.parent, self.parent.component_scopes
        for uri in self._resources:
            parent.resources.pop(uri, None)
            scopes.pop(("resource", uri), None)
        for uri in self._templates:
            parent.templates.pop(uri, None)
            scopes.pop(("resource", uri), None)
        self._resources, self._templates = set(), set()
        for table, mine, theirs in ((parent.resources, self._resources, self.child.resources),
                                    (parent.templates, self._templates, self.child.templates)):
            for uri, resource in list(theirs.items()):
                if uri in table:  # the parent's own, or another mount's: keep the first
                    continue
                if self.carrier.carries_resource(self.child, uri):
                    continue  # an extension brings it itself (skills, under the namespace)
                if not self.transform.admits(uri, resource):
                    continue
                table[uri] = self._shaped(uri, resource)
                mine.add(uri)
                self._copy_scopes("resource", uri, uri)

    def _shaped(self, uri: str, resource: Resource) -> Resource:
        shape = self.transform
        if uri not in shape.describe and shape.visible is None:
            return resource
        return Resource(resource.uri, resource.fn, resource.signature,
                        shape.wire(resource.wire, uri), resource.mime_type, resource.ttl_ms,
                        resource.cache_scope, resource.template,
                        shape.guard("resource", uri, uri) + resource.middleware,
                        tags_of(resource))

    def _copy_scopes(self, kind: str, old: str, new: str) -> None:
        wanted = self.child.component_scopes.get((kind, old))
        if wanted is not None:
            self.parent.component_scopes[(kind, new)] = wanted

    def _follow(self, what: str, detail: Any) -> None:
        if not self._live:
            return
        if what in ("tools", "prompts", "resources"):
            # A mount made on the child since: its filters run here too.
            install_wraps(self.parent, _mounted(self.parent))
            self.sync(what)
            if what == "resources":
                self.carrier.rejoin(self.namespace)
        elif what == "extension":  # installed on the child later: carried now, or refused
            self.carrier.check(self.child, [detail])
            self.carrier.carry(self.namespace, self.child, detail)
        elif what == "unextension":
            self.carrier.release(self.namespace, detail)
        elif what == "resource" and self.serves(detail):
            # A child resource's content changed: its URI is ours too, unless the mount left it
            # out (hide=, tags=).
            self.parent.notify_resource_updated(detail)

    def unmount(self) -> None:
        """Take the child's components out of the parent (the parent's listeners hear it)."""
        self._live = False
        _mounts(self.parent).pop(self.namespace, None)
        self.carrier.release(self.namespace)
        parent, scopes = self.parent, self.parent.component_scopes
        for names, table, kind in ((self._tools, parent.tools, "tool"),
                                   (self._prompts, parent.prompts, "prompt"),
                                   (self._resources, parent.resources, "resource"),
                                   (self._templates, parent.templates, "resource")):
            for name in names:
                table.pop(name, None)
                scopes.pop((kind, name), None)
            names.clear()
        parent.notify_tools_changed()
        parent.notify_prompts_changed()
        parent.notify_resources_changed()


def mount(parent: Server, child: Server, *, namespace: str,
          rename: Mapping[str, str] | None = None, hide: Collection[str] | None = None,
          describe: Mapping[str, str] | None = None, tags: Collection[str] | None = None,
          visible: Visible | None = None) -> Mount:
    """Serve `child`'s tools and prompts from `parent` as `<namespace>_<name>`, its resources
    and templates at their own URIs, following later changes to the child (module docstring).

    Transforms (gateway/transform.py; names and URIs are the child's own): `rename` maps a
    tool or prompt name to the one served (still namespaced), `hide` leaves names or URIs out,
    `describe` replaces descriptions, `tags` brings in only components carrying one of them,
    `visible(principal, kind, name)` shows a component to some callers only.

    Refused when mounting (ValueError): a namespace outside `[A-Za-z0-9][A-Za-z0-9.-]*` (no `_`,
    so the separator splits one way), a namespace already mounted, a mounted name that clashes
    with one the parent has or is longer than 128 characters, a resource URI both serve.

    The child's server-wide middleware runs for requests that reach its components, in its
    order, inside the parent's middleware (gateway/carried.py). The child's extensions are
    carried by the rule each declares (gateway/carry.py): merged into the parent's under the
    namespace, or shared as the same instance; a conflict is refused (ValueError).
    """
    if not isinstance(parent, Server) or not isinstance(child, Server):
        raise TypeError("mount(parent, child, namespace=...) takes two rondo.Server objects")
    if child is parent:
        raise ValueError("a server cannot be mounted on itself")
    if not isinstance(namespace, str) or not _NAMESPACE.fullmatch(namespace):
        raise ValueError(f"namespace must match [A-Za-z0-9][A-Za-z0-9.-]* (at most 64 "
                         f"characters, no '{SEPARATOR}'), got {namespace!r}")
    mounts: dict[str, Mount] = _mounts(parent)
    if namespace in mounts:
        raise ValueError(f"namespace {namespace!r} is mounted twice")
    made = Mount(parent, child, namespace, Transform.of(rename, hide, describe, tags, visible))
    for kind, names, table in (("tool", child.tools, parent.tools),
                               ("prompt", child.prompts, parent.prompts)):
        for name in names:
            if name in made.transform.hide:
                continue
            full = made.name(name)
            if len(full) > _MAX_NAME:
                raise ValueError(f"{kind} {full!r} is longer than {_MAX_NAME} characters")
            if full in table:
                raise ValueError(f"{kind} {full!r} is already served by {parent.name!r}")
    for uri in (*child.resources, *child.templates):
        if made.carrier.carries_resource(child, uri):
            continue
        if uri in parent.resources or uri in parent.templates:
            raise ValueError(f"resource {uri!r} is served by both {parent.name!r} and "
                             f"{child.name!r} (mounted resources keep their URIs)")
    for new in made.transform.rename.values():
        if not _NAMESPACE_FREE.fullmatch(new):
            raise ValueError(f"rename= gives {new!r}, which is not a tool name "
                             "(A-Z a-z 0-9 _ - ., 1 to 128 characters)")
    extensions = list(child.extensions.values())
    made.carrier.check(child, extensions)
    try:  # before the middleware wrap: the child's chain stays outside a carried task
        for extension in extensions:
            made.carrier.carry(namespace, child, extension)
    except Exception:
        made.carrier.release(namespace)
        raise
    mounts[namespace] = made
    install_wraps(parent, _mounted(parent))
    for what in ("tools", "prompts", "resources"):
        made.sync(what)
    child.on_change(made._follow)
    if child.completion_handler is not None:
        route_completions(parent, _mounted(parent))
    parent.lifespan(_child_lifespan(child))  # its hooks, now or added later
    return made


def _mounts(parent: Server) -> dict[str, Mount]:
    """The mounts on `parent`, kept on it under a private attribute of this module's own."""
    found: dict[str, Mount] | None = parent.__dict__.get("_rondo_gateway_mounts")
    if found is None:
        found = {}
        parent.__dict__["_rondo_gateway_mounts"] = found
    return found


def _mounted(parent: Server) -> Callable[[], list[Mount]]:
    """The mounts on `parent`, as the wraps and the completion router read them: the current
    ones at each call."""
    return lambda: list(_mounts(parent).values())


def _child_lifespan(child: Server) -> Any:
    async def child_lifespan(parent: Server) -> AsyncIterator[dict[str, Any]]:
        async with child.started() as values:
            if child.completion_handler is not None:  # a proxy's, installed as it connects
                route_completions(parent, _mounted(parent))
            yield dict(values)

    child_lifespan.__name__ = f"{child.name}_lifespan"
    return child_lifespan
