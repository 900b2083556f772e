"""The client half of MCP Apps: declare the extension, and read a tool's view.

    apps = AppsClient()
    async with rondo.Client(target, extensions=[apps]) as client:
        linked = await tool_view(client, "orders")   # None: the tool has no view
        render(linked.html, csp=linked.meta.csp)

What comes back is checked before a host renders it: the content is of the extension's MIME
type, within the size limit, and every CSP entry is an origin (nothing else can reach the
policy a host builds from it). The content item's `_meta.ui` wins over the listing's, as the
extension says; the listing's is used when the content item carries none.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..wire.errors import McpError
from .meta import EXTENSION, MIME_TYPE, AppsError, ToolLink, ViewMeta, check_uri, same_mime
from .view import MAX_BYTES

if TYPE_CHECKING:
    from ..client.session import Client


class AppsClient:
    """`rondo.Client(..., extensions=[AppsClient()])` declares
    `extensions["io.modelcontextprotocol/ui"] = {"mimeTypes": ["text/html;profile=mcp-app"]}`:
    the server then lists the tools only views call, as it would to any host."""

    name = EXTENSION

    def __init__(self) -> None:
        self.capability: dict[str, Any] = {"mimeTypes": [MIME_TYPE]}
        self.result_types: dict[str, Any] = {}


@dataclass(frozen=True)
class ViewResource:
    """A view as read: its `uri`, `html` and parsed `meta` (`ViewMeta`)."""

    uri: str
    html: str
    meta: ViewMeta


@dataclass(frozen=True)
class LinkedView:
    """A tool's view: the `tool`'s name, its `link` (`ToolLink`: URI and visibility), and the
    view as read (`view`)."""

    tool: str
    link: ToolLink
    view: ViewResource

    @property
    def html(self) -> str:
        return self.view.html

    @property
    def meta(self) -> ViewMeta:
        return self.view.meta


def _text(item: dict[str, Any], uri: str, max_bytes: int) -> str:
    text = item.get("text")
    if isinstance(text, str):
        if len(text) > max_bytes or len(text.encode("utf-8")) > max_bytes:
            raise AppsError(f"view {uri} is over the {max_bytes}-byte limit")
        return text
    blob = item.get("blob")
    if not isinstance(blob, str):
        raise AppsError(f"view {uri} has neither text nor blob content")
    if len(blob) > (max_bytes + 2) // 3 * 4 + 4:
        raise AppsError(f"view {uri} is over the {max_bytes}-byte limit")
    try:
        return base64.b64decode(blob, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise AppsError(f"view {uri}: the blob is not base64 of UTF-8 HTML") from None


async def read_view(client: Client, uri: str, *, max_bytes: int = MAX_BYTES) -> ViewResource:
    """Read the view at `uri` (`resources/read`) and check it; `AppsError` says what is wrong
    (not a `ui://` URI, not served, another MIME type, too large, metadata of the wrong shape)."""
    check_uri(uri)
    try:
        result = await client.read_resource(uri)
    except McpError as exc:
        raise AppsError(f"the server did not serve view {uri}: {exc.message} "
                        f"(code {exc.code})") from exc
    item = next((c for c in result.contents if c.get("uri") == uri), None)
    if item is None:
        raise AppsError(f"the server's answer for view {uri} has no content for that URI")
    if not same_mime(item.get("mimeType")):
        raise AppsError(f"view {uri} is served as {item.get('mimeType')!r}, not {MIME_TYPE!r}")
    html = _text(item, uri, max_bytes)
    meta = item.get("_meta")
    if meta is not None and not isinstance(meta, dict):
        raise AppsError(f"view {uri}: _meta must be an object")
    ui = (meta or {}).get("ui")
    if ui is None:  # the content item says nothing: the listing's metadata, if any
        for resource in await client.list_resources():
            if resource.uri == uri:
                ui = (resource.meta or {}).get("ui")
                break
    try:
        parsed = ViewMeta() if ui is None else ViewMeta.parse(ui)
    except AppsError as exc:
        raise AppsError(f"view {uri}: {exc}") from None
    return ViewResource(uri, html, parsed)


async def tool_view(client: Client, tool: str, *, max_bytes: int = MAX_BYTES) -> LinkedView | None:
    """The view `tool` renders in, read and checked (None: the tool names no view).
    `AppsError` for a tool this server does not list, a malformed link, or a bad view."""
    for listed in await client.list_tools():
        if listed.name == tool:
            break
    else:
        raise AppsError(f"the server lists no tool {tool!r}")
    try:
        link = ToolLink.parse(listed.meta)
    except AppsError as exc:
        raise AppsError(f"tool {tool!r}: {exc}") from None
    if link is None:
        return None
    return LinkedView(tool, link, await read_view(client, link.resource_uri,
                                                   max_bytes=max_bytes))
