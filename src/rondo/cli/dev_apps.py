"""MCP Apps in `rondo dev`: a tool's view (a `ui://` resource) hosted in a sandboxed frame.

The page runs the official host bridge (`AppBridge` from `@modelcontextprotocol/ext-apps`, a
browser bundle given with `--apps-bridge`; rondo ships no JavaScript of its own for it and
needs no Node unless you build that bundle). The view runs two frames deep, on another origin
than the page: the page's name is 127.0.0.1, the sandbox proxy's is localhost (or the other
way round), so the view can never reach the page, its secret or its API. The proxy document
is served with the view's Content-Security-Policy as an HTTP header, built here from the
domains the view declared (`_meta.ui.csp`), and the view's own frame (`srcdoc`, sandboxed
without `allow-same-origin`) inherits it: a domain the view did not declare is never loaded,
and a declared "domain" that is not an origin refuses the view.

What a view asks for goes through the same client as the page: its `tools/call` (checked
against the tool's `visibility`), `resources/read`; a call answered `input_required` shows its
question on the page, and the view gets the final result.
"""

from __future__ import annotations

import base64
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Json = dict[str, Any]

EXTENSION = "io.modelcontextprotocol/ui"
MIME_TYPE = "text/html;profile=mcp-app"
MAX_VIEW_BYTES = 4 << 20  # a view's HTML (its scripts inlined)
MAX_BRIDGE_BYTES = 8 << 20
MAX_VIEWS = 50  # views kept for their sandbox to fetch
BRIDGE_GLOBAL = "McpAppsHost"
ENV_BRIDGE = "RONDO_APPS_BRIDGE"

# An origin a view may name: a scheme, a host (a leading "*." allowed) and maybe a port; no
# path, query, quotes, spaces or semicolons, nothing that could end the CSP directive.
_ORIGIN = re.compile(r"^(https?|wss?)://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:\d{1,5})?$")


class ViewError(ValueError):
    """A view this host will not render (and why)."""


def load_bridge(path: str | Path) -> bytes:
    """The host bridge bundle: a browser script defining `window.McpAppsHost` (the ext-apps
    `./app-bridge` entry). A missing or foreign file fails here, at start-up."""
    file = Path(path)
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise ViewError(f"cannot read the apps bridge {file}: {exc.strerror or exc}") from exc
    if len(data) > MAX_BRIDGE_BYTES:
        raise ViewError(f"the apps bridge {file} is larger than {MAX_BRIDGE_BYTES} bytes")
    if f"var {BRIDGE_GLOBAL}=".encode() not in data[:4096] or b"AppBridge" not in data:
        raise ViewError(f"{file} is not a browser bundle of @modelcontextprotocol/ext-apps/app-bridge "
                        f"defining window.{BRIDGE_GLOBAL} (see docs/apps.md, Hosting views)")
    return data


def bridge_version(bundle: bytes) -> str | None:
    """The ext-apps version named in the bundle's banner, if it has one."""
    found = re.search(rb"@modelcontextprotocol/ext-apps (\d+\.\d+\.\d+\S*)", bundle[:512])
    return found.group(1).decode() if found else None


def origins(csp: Json, key: str) -> list[str]:
    """The origins listed under `csp[key]`; anything else is refused."""
    listed = csp.get(key)
    if listed is None:
        return []
    if not isinstance(listed, list):
        raise ViewError(f"_meta.ui.csp.{key} must be a list of origins")
    for entry in listed:
        if not isinstance(entry, str) or not _ORIGIN.match(entry):
            raise ViewError(f"_meta.ui.csp.{key} names {entry!r}, which is not an origin "
                            "(scheme://host[:port])")
    return list(listed)


def view_csp(ui: Json, frame_ancestor: str) -> str:
    """The Content-Security-Policy a view runs under: the extension's default, widened only by
    the origins the view declared, framed only by the page (`frame_ancestor`)."""
    csp = ui.get("csp") or {}
    if not isinstance(csp, dict):
        raise ViewError("_meta.ui.csp must be an object")
    connect = origins(csp, "connectDomains")
    resource = " ".join(origins(csp, "resourceDomains"))
    frames = origins(csp, "frameDomains")
    bases = origins(csp, "baseUriDomains")
    extra = f" {resource}" if resource else ""
    directives = [
        "default-src 'none'",
        f"script-src 'self' 'unsafe-inline'{extra}",
        f"style-src 'self' 'unsafe-inline'{extra}",
        f"img-src 'self' data:{extra}",
        f"font-src 'self'{extra}",
        f"media-src 'self' data:{extra}",
        "connect-src " + (" ".join(connect) if connect else "'none'"),
        "frame-src " + (" ".join(frames) if frames else "'none'"),
        "base-uri " + (" ".join(bases) if bases else "'none'"),
        "form-action 'none'",
        f"frame-ancestors {frame_ancestor}",
    ]
    return "; ".join(directives)


def tool_view_uri(tool: Json) -> str | None:
    """The `ui://` resource a tool links (`_meta.ui.resourceUri`, else the older flat key)."""
    meta = tool.get("_meta") or {}
    ui = meta.get("ui")
    uri = ui.get("resourceUri") if isinstance(ui, dict) else None
    uri = uri if uri is not None else meta.get("ui/resourceUri")
    return uri if isinstance(uri, str) else None


def visibility(tool: Json) -> list[str]:
    """Who may call the tool: "model" (the agent's list), "app" (a view); both by default."""
    ui = (tool.get("_meta") or {}).get("ui")
    seen = ui.get("visibility") if isinstance(ui, dict) else None
    if isinstance(seen, list) and all(isinstance(v, str) for v in seen):
        return list(seen)
    return ["model", "app"]


@dataclass(frozen=True)
class View:
    """A view ready for its sandbox: the HTML, the CSP it runs under, what it declared."""

    id: str
    uri: str
    html: str
    csp: str
    ui: Json
    tool: str
    page: str  # the page's origin: the only one that may frame the view, and talk to it


def make_view(uri: str, read: Json, listed: Json | None, tool: str, frame_ancestor: str) -> View:
    """Check a `resources/read` result for `uri` and make it a `View` (or say why not)."""
    if not uri.startswith("ui://"):
        raise ViewError(f"a view's URI must start with ui://, not {uri!r}")
    items = [c for c in read.get("contents") or [] if isinstance(c, dict) and c.get("uri") == uri]
    if not items:
        raise ViewError(f"reading {uri} gave no content for that URI")
    item = items[0]
    if item.get("mimeType") != MIME_TYPE:
        raise ViewError(f"{uri} is {item.get('mimeType')!r}, not {MIME_TYPE}")
    if isinstance(item.get("text"), str):
        html = item["text"]
    elif isinstance(item.get("blob"), str):
        try:
            html = base64.b64decode(item["blob"], validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError) as exc:
            raise ViewError(f"{uri}'s blob is not base64 UTF-8 HTML") from exc
    else:
        raise ViewError(f"{uri} has neither text nor blob")
    if len(html.encode()) > MAX_VIEW_BYTES:
        raise ViewError(f"{uri} is larger than {MAX_VIEW_BYTES} bytes")
    ui = (item.get("_meta") or {}).get("ui")  # the content item's metadata wins
    if ui is None:
        ui = ((listed or {}).get("_meta") or {}).get("ui")
    if ui is None:
        ui = {}
    if not isinstance(ui, dict):
        raise ViewError(f"{uri}'s _meta.ui must be an object")
    return View(secrets.token_urlsafe(12), uri, html, view_csp(ui, frame_ancestor), ui, tool,
                frame_ancestor)


def sandbox_host(page_host: str) -> str:
    """The other loopback name, same port: the sandbox's origin is never the page's."""
    found = re.match(r"^(\[[^\]]*\]|[^:]*)(?::(\d+))?$", page_host)
    name, port = (found.group(1), found.group(2)) if found else (page_host, None)
    other = "127.0.0.1" if name == "localhost" else "localhost"
    return f"{other}:{port}" if port else other


def sandbox_page(host_origin: str) -> bytes:
    """The sandbox proxy document (its script is `SANDBOX_SCRIPT`, served from its own origin)."""
    return ("<!doctype html><html data-host-origin=\"" + host_origin + "\"><head><meta charset=\"utf-8\">"
            "<title>view sandbox</title><style>html,body{margin:0;height:100%;background:#fff}"
            "iframe{border:0;width:100%;height:100%;display:block}</style></head><body>"
            "<script src=\"/apps/sandbox.js\"></script></body></html>").encode()


# The proxy between the page (its parent, on the page's origin) and the view (its child, an
# opaque origin): it loads the view's HTML when the page's bridge sends it, then relays every
# message one way or the other, and nothing from anyone else.
SANDBOX_SCRIPT = b"""\"use strict\";
(() => {
  const host = document.documentElement.dataset.hostOrigin;
  let view = null;
  window.addEventListener("message", (event) => {
    const message = event.data;
    if (event.source === window.parent) {
      if (event.origin !== host) return;
      if (message && message.method === "ui/notifications/sandbox-resource-ready") {
        if (view || !message.params || typeof message.params.html !== "string") return;
        view = document.createElement("iframe");
        view.setAttribute("sandbox", "allow-scripts allow-forms");
        view.setAttribute("title", "view");
        view.srcdoc = message.params.html;
        document.body.append(view);
      } else if (view && view.contentWindow) {
        view.contentWindow.postMessage(message, "*");
      }
    } else if (view && event.source === view.contentWindow) {
      window.parent.postMessage(message, host);
    }
  });
  window.parent.postMessage({jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {}}, host);
})();
"""
