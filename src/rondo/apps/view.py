"""A view: one self-contained HTML document served as a `ui://` resource.

The HTML comes inline, from a file, or from a built bundle (a directory whose entry page has
its scripts and styles inlined, as Vite's single-file build makes it). It is read and checked
once, when the view is declared: an HTML5 document, within the size limit, with no asset it
cannot load (a relative path resolves against nothing in a sandboxed frame; an outside origin
must be declared in the view's CSP).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .meta import MIME_TYPE, AppsError, Csp, Permissions, ViewMeta, check_uri

MAX_BYTES = 5 * 1024 * 1024  # a built single-file bundle with a framework fits well under this

_DOCTYPE = re.compile(rb"^(?:\xef\xbb\xbf)?\s*<!doctype\s+html\s*>", re.IGNORECASE)
# Where a page pulls something in: elements that load, and the attribute that names the URL. A
# tag's scan stops at the next `<`, so no character is scanned twice: linear in the page.
_ASSET = re.compile(
    r"<(script|link|img|iframe|source|video|audio|embed)\b[^<>]*?\s(src|href)\s*=\s*"
    r"(?:\"([^\"]*)\"|'([^']*)'|([^\s>]+))",
    re.IGNORECASE,
)
_KIND = {"iframe": "frame"}


def _check_assets(html: str, csp: Csp | None, where: str) -> None:
    for match in _ASSET.finditer(html):
        element = match.group(1).lower()
        url = next(g for g in match.group(3, 4, 5) if g is not None).strip()
        if element == "link" and "stylesheet" not in match.group(0).lower() \
                and "modulepreload" not in match.group(0).lower():
            continue  # <link rel="icon"> and friends: a host may drop them, no harm
        if not url or url.startswith(("data:", "#", "about:", "blob:")):
            continue
        parts = urlsplit(url if not url.startswith("//") else "https:" + url)
        if not parts.scheme:
            raise AppsError(
                f"{where}: <{element}> loads {url!r}, a relative path, which a sandboxed view "
                "cannot resolve: inline it (a single-file build, e.g. vite-plugin-singlefile) or "
                "load it from an origin declared in csp.resource_domains")
        if parts.scheme not in ("http", "https"):
            raise AppsError(f"{where}: <{element}> loads {url!r}: only http(s) origins can be "
                            "declared for a view")
        origin = f"{parts.scheme}://{parts.netloc}"
        kind = _KIND.get(element, "resource")
        if csp is None or not csp.allows(origin, kind):
            raise AppsError(f"{where}: <{element}> loads from {origin}, which the view does not "
                            f"declare: add it to csp.{kind}_domains")


def check_html(data: bytes, *, where: str, max_bytes: int, csp: Csp | None) -> str:
    """The view's HTML as text, or `AppsError` saying what is wrong with it."""
    if len(data) > max_bytes:
        raise AppsError(f"{where}: the HTML is {len(data)} bytes, over the {max_bytes}-byte "
                        "limit (max_bytes=)")
    if not _DOCTYPE.match(data[:1024]):
        raise AppsError(f"{where}: a view must be an HTML5 document starting with "
                        "<!doctype html>")
    try:
        html = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AppsError(f"{where}: the HTML is not UTF-8 ({exc.reason} at byte {exc.start})") \
            from None
    _check_assets(html, csp, where)
    return html.removeprefix("\ufeff")


def _source(html: str | None, file: str | os.PathLike[str] | None,
            bundle: str | os.PathLike[str] | None, entry: str) -> tuple[bytes, str]:
    given = [name for name, value in (("html", html), ("file", file), ("bundle", bundle))
             if value is not None]
    if len(given) != 1:
        raise AppsError(f"a view needs exactly one of html=, file=, bundle= (got {given or 'none'})")
    if html is not None:
        if not isinstance(html, str):
            raise AppsError(f"html= must be a str, got {type(html).__name__}")
        return html.encode("utf-8"), "html"
    if file is not None:
        path = Path(file)
    else:
        assert bundle is not None
        root = Path(bundle)
        if not root.is_dir():
            raise AppsError(f"bundle {str(root)!r} is not a directory (give the build's output "
                            "directory, e.g. dist/)")
        path = root / entry
    try:
        return path.read_bytes(), str(path)
    except OSError as exc:
        raise AppsError(f"cannot read the view's HTML from {str(path)!r}: {exc.strerror}") \
            from None


class View:
    """A declared view (`apps.view(...)` makes one): its `uri`, resource listing fields, `meta`
    (`ViewMeta`) and `html`. `contents()` is its `resources/read` content item."""

    __slots__ = ("uri", "name", "title", "description", "meta", "html", "reload", "_path",
                 "_stamp", "_max_bytes")

    def __init__(
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
        max_bytes: int = MAX_BYTES,
        reload: bool = False,
    ) -> None:
        self.uri = check_uri(uri)
        if not isinstance(max_bytes, int) or isinstance(max_bytes, bool) or max_bytes < 1:
            raise AppsError("max_bytes must be a positive integer")
        self.meta = ViewMeta(
            csp=csp if csp is None or isinstance(csp, Csp) else Csp.parse(csp),
            permissions=permissions if permissions is None or isinstance(permissions, Permissions)
            else Permissions.parse(permissions),
            domain=domain, prefers_border=prefers_border)
        if reload and html is not None:
            raise AppsError("reload=True needs file= or bundle=: inline HTML never changes")
        self.reload = bool(reload)
        self._max_bytes = max_bytes
        data, where = _source(html, file, bundle, entry)
        self._path = None if html is not None else Path(where)
        self._stamp = self._stat()
        self.html = check_html(data, where=f"view {uri} ({where})", max_bytes=max_bytes,
                               csp=self.meta.csp)
        self.name = name or uri[len("ui://"):]
        self.title = title
        self.description = description

    def _stat(self) -> tuple[int, int] | None:
        if self._path is None:
            return None
        try:
            found = self._path.stat()
        except OSError:
            return None
        return found.st_mtime_ns, found.st_size

    def fresh(self) -> None:
        """With `reload=True`: read the file again if it changed since it was last read, and
        check it as at declaration (`AppsError` if it no longer passes; the last good HTML is
        kept for when it does again)."""
        if not self.reload or self._path is None:
            return
        stamp = self._stat()
        if stamp == self._stamp:
            return
        try:
            data = self._path.read_bytes()
        except OSError as exc:
            raise AppsError(f"view {self.uri} ({self._path}): cannot read it: {exc.strerror}") \
                from None
        self.html = check_html(data, where=f"view {self.uri} ({self._path})",
                               max_bytes=self._max_bytes, csp=self.meta.csp)
        self._stamp = stamp

    def contents(self) -> dict[str, Any]:
        self.fresh()
        item: dict[str, Any] = {"uri": self.uri, "mimeType": MIME_TYPE, "text": self.html}
        ui = self.meta.wire()
        if ui:
            item["_meta"] = {"ui": ui}
        return item

    def __repr__(self) -> str:
        return f"<View {self.uri} {len(self.html)} chars>"
