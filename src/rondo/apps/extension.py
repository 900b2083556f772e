"""`Apps`: the MCP Apps extension (`io.modelcontextprotocol/ui`) on a rondo server.

It serves views as `ui://` resources of the extension's MIME type (the `_meta.ui` metadata on
both the listing and the content item, since hosts read one or the other), links tools to them
(`_meta.ui` and the flat legacy key) and advertises `extensions["io.modelcontextprotocol/ui"]`.
With `hide_app_only=True` it also wraps `tools/list`, to keep tools meant for views alone
(`visibility: ["app"]`) out of the list of a client that did not declare the extension. A
view's own calls are ordinary `tools/call`: nothing here touches them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..server.method import Handler, Method, Wrap
from ..wire.errors import INTERNAL_ERROR, McpError
from .meta import (
    EXTENSION,
    LEGACY_RESOURCE_URI,
    MIME_TYPE,
    VISIBILITIES,
    AppsError,
    Csp,
    Permissions,
    ToolLink,
    same_mime,
    supports,
)
from .view import MAX_BYTES, View

if TYPE_CHECKING:
    from ..core.core import Core
    from ..server.request import Request
    from ..server.server import Server

log = logging.getLogger("rondo.apps")


def _model_visible(item: Any) -> bool:
    meta = item.get("_meta") if isinstance(item, dict) else None
    ui = meta.get("ui") if isinstance(meta, dict) else None
    visibility = ui.get("visibility") if isinstance(ui, dict) else None
    return not isinstance(visibility, list) or "model" in visibility


class Apps:
    """Serve views and link tools to them: `apps = server.extension(rondo.apps.Apps())`, then
    `apps.view(...)` and `@apps.tool(view=...)`.

    - `hide_app_only`: leave tools whose visibility lacks "model" out of `tools/list` for a
      client that did not declare the extension (their calls are still answered). The list
      then depends on the caller, so it is marked `cacheScope: "private"` when such tools
      exist. Off by default: an intermediary that does not declare the extension (a proxy, a
      gateway, an inspector) would lose those tools, and the views behind it their calls.
    - `max_bytes`: the default size limit of a view's HTML.
    """

    name = EXTENSION

    def __init__(self, *, hide_app_only: bool = False, max_bytes: int = MAX_BYTES) -> None:
        self.hide_app_only = bool(hide_app_only)
        self.max_bytes = max_bytes
        self.views: dict[str, View] = {}
        self._scopes: dict[str, list[str] | None] = {}
        self.server: Server | None = None
        self._members: set[str] = set()  # namespaces of mounted children joined (`join`)

    # -- declaring views and tools ------------------------------------------------------------

    def view(
        self,
        uri: str,
        *,
        html: str | None = None,
        file: str | os.PathLike[str] | None = None,
        bundle: str | os.PathLike[str] | None = None,
        entry: str = "index.html",
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        csp: Csp | Mapping[str, Any] | None = None,
        permissions: Permissions | Mapping[str, Any] | None = None,
        domain: str | None = None,
        prefers_border: bool | None = None,
        max_bytes: int | None = None,
        scopes: list[str] | None = None,
        reload: bool = False,
    ) -> View:
        """Declare a view at `uri` (`ui://...`) from exactly one of `html=` (the document as a
        string), `file=` (a path) or `bundle=` (a build's output directory; `entry` is the page
        in it). `csp` lists the outside origins it may reach (`Csp(...)` or the wire's
        `{"connectDomains": [...], ...}`), `permissions` the browser features it asks for,
        `domain` a dedicated sandbox origin in the host's format, `prefers_border` the host's
        frame. The HTML is read and checked now; `AppsError` says what is wrong. `reload=True`
        (with `file=` or `bundle=`, for development: `vite build --watch`) reads the file
        again on a read after it changed, checked the same way."""
        if uri in self.views:
            raise AppsError(f"view {uri!r} is declared twice")
        view = View(uri, html=html, file=file, bundle=bundle, entry=entry, name=name,
                    title=title, description=description, csp=csp,
                    permissions=permissions, domain=domain,
                    prefers_border=prefers_border,
                    max_bytes=self.max_bytes if max_bytes is None else max_bytes,
                    reload=reload)
        self.views[uri] = view
        self._scopes[uri] = scopes
        if self.server is not None:
            self._register(self.server, view)
        return view

    def _register(self, server: Server, view: View) -> None:
        def read_view() -> dict[str, Any]:
            try:
                return view.contents()
            except AppsError as exc:  # a reloaded file that no longer passes: the log says why
                log.warning("%s", exc)
                raise McpError(INTERNAL_ERROR, f"view {view.uri} cannot be served: its file "
                               "changed and no longer passes the view checks (see the server "
                               "log)") from None

        ui = view.meta.wire()
        server.resource(view.uri, name=view.name, title=view.title,
                        description=view.description, mime_type=MIME_TYPE,
                        size=None if view.reload else len(view.html.encode("utf-8")),
                        meta={"ui": ui} if ui else None, thread=view.reload,  # file I/O
                        scopes=self._scopes.get(view.uri))(read_view)

    def link(self, view: View | str, *, visibility: Iterable[str] = VISIBILITIES,
             meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The `_meta` of a tool that renders in `view` (a declared `View` or its URI), with
        `meta`'s own entries kept: for `server.tool(meta=apps.link(view))`."""
        uri = view.uri if isinstance(view, View) else view
        if uri not in self.views:
            raise AppsError(f"no view {uri!r} is declared on this extension (apps.view(...) "
                            "first)")
        out = dict(meta or {})
        if "ui" in out or LEGACY_RESOURCE_URI in out:
            raise AppsError("a linked tool's meta= must not carry 'ui' or 'ui/resourceUri': the "
                            "link sets them")
        out.update(ToolLink(uri, tuple(visibility)).wire())
        return out

    def tool(self, fn: Callable[..., Any] | None = None, /, *, view: View | str,
             visibility: Iterable[str] = VISIBILITIES, meta: Mapping[str, Any] | None = None,
             **options: Any) -> Any:
        """`@apps.tool(view=...)`: `server.tool(...)` for a tool that renders in `view`;
        `visibility=["app"]` for one only the view calls. Other options are `server.tool`'s.
        Its result still needs text content for clients without views (rondo's results have
        it)."""
        server = self.server
        if server is None:
            raise AppsError("install the extension first: apps = server.extension(Apps())")
        linked = self.link(view, visibility=visibility, meta=meta)
        decorate = server.tool(meta=linked, **options)
        return decorate(fn) if fn is not None else decorate

    def check(self) -> None:
        """Every tool that names a view names one served here as a view: a `ui://` resource
        of the extension's MIME type, and its `_meta` has the extension's shape. Run when the
        server starts (its lifespan), and by tests; `AppsError` names the tool."""
        server = self.server
        if server is None:
            return
        for name, tool in server.tools.items():
            try:
                found = ToolLink.parse(tool.wire.get("_meta"))
            except AppsError as exc:
                raise AppsError(f"tool {name!r}: {exc}") from None
            if found is None:
                continue
            resource = server.resources.get(found.resource_uri)
            if resource is None:
                raise AppsError(f"tool {name!r} renders in {found.resource_uri}, which the "
                                "server does not serve")
            if not same_mime(resource.mime_type):
                raise AppsError(f"tool {name!r} renders in {found.resource_uri}, served as "
                                f"{resource.mime_type!r}, not {MIME_TYPE!r}")

    # -- mounted (rondo.gateway.mount) ----------------------------------------------------------

    def hub(self) -> Apps:
        """The instance a parent without the extension advertises it with for its mounted
        children: no views of its own (a child's views come in as the child's `ui://`
        resources, at their own URIs, so every tool's `_meta.ui.resourceUri` stays right)."""
        return Apps(hide_app_only=self.hide_app_only, max_bytes=self.max_bytes)

    def join(self, namespace: str, member: Any) -> None:
        """A mounted child's Apps: its views and linked tools are already the parent's
        resources and tools; only `hide_app_only` must agree (it filters the whole list)."""
        if not isinstance(member, Apps):
            raise AppsError(f"a mounted server's {EXTENSION!r} extension is not Apps")
        if member.hide_app_only != self.hide_app_only:
            raise AppsError(f"the server mounted as {namespace!r} has Apps(hide_app_only="
                            f"{member.hide_app_only}) and this one hide_app_only="
                            f"{self.hide_app_only}: the setting filters the whole tools/list, "
                            "so the two must agree")
        self._members.add(namespace)

    def leave(self, namespace: str) -> None:
        self._members.discard(namespace)

    # -- the Extension protocol ---------------------------------------------------------------

    def capability(self, server: Server) -> Mapping[str, Any] | None:
        return {}

    def methods(self) -> Iterable[Method]:
        return ()

    def wraps(self) -> Iterable[Wrap]:
        return [Wrap("tools/list", self._list)] if self.hide_app_only else []

    def attach(self, server: Server) -> None:
        if self.server is not None and self.server is not server:
            raise AppsError("this Apps extension is installed on another server already")
        self.server = server
        for view in self.views.values():
            if view.uri not in server.resources:
                self._register(server, view)
        server.lifespan(self._at_start)

    async def _at_start(self, server: Server) -> AsyncIterator[dict[str, Any]]:
        self.check()
        yield {}

    # -- tools/list ---------------------------------------------------------------------------

    async def _list(self, core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
        result = await call_next(core, req)
        if not any(not _model_visible(t.wire) for t in core.server.tools.values()):
            return result  # nothing to hide: the list is the same for everyone
        if "cacheScope" in result:
            result["cacheScope"] = "private"
        if not supports(req.env.capabilities):
            result["tools"] = [t for t in result["tools"] if _model_visible(t)]
        return result
