"""MCP Apps in `rondo dev`: a tool's view (a `ui://` resource) hosted in a sandboxed frame.

The page runs the official host bridge (`AppBridge` from `@modelcontextprotocol/ext-apps`, a
browser bundle given with `--apps-bridge`; rondo ships no JavaScript of its own for it and
needs no Node unless you build that bundle). The view runs two frames deep, on another origin
than the page: the page's name is 127.0.0.1, the sandbox proxy's is localhost (or the other
way round), so the view can never reach the page, its secret or its API. The proxy document
is served with the view's Content-Security-Policy as an HTTP header, built here from the
domains the view declared (`_meta.ui.csp`, read and checked by `rondo.apps.client`), and the
view's own frame (`srcdoc`, sandboxed without `allow-same-origin`) inherits it: a domain the
view did not declare is never loaded, and a declared "domain" that is not an origin refuses
the view.

What a view asks for goes through the same client as the page: its `tools/call` (checked
against the tool's `visibility`), `resources/read`; a call answered `input_required` shows its
question on the page, and the view gets the final result.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_BRIDGE_BYTES = 8 << 20
MAX_VIEWS = 50  # views kept for their sandbox to fetch
BRIDGE_GLOBAL = "McpAppsHost"
ENV_BRIDGE = "RONDO_APPS_BRIDGE"

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


@dataclass(frozen=True)
class HostedView:
    """A view ready for its sandbox: the HTML, the CSP it runs under, the page that shows it."""

    id: str
    uri: str
    html: str
    csp: str
    tool: str
    page: str  # the page's origin: the only one that may frame the view, and talk to it


def host(linked: Any, page_origin: str) -> HostedView:
    """A view as `rondo.apps.client.tool_view` read and checked it, made ready for a sandbox:
    the CSP is the view's own policy (`ViewMeta.policy()`: the extension's default, widened
    only by the origins it declared), with no form posting and framed only by the page."""
    csp = f"{linked.meta.policy()}; form-action 'none'; frame-ancestors {page_origin}"
    return HostedView(secrets.token_urlsafe(12), linked.view.uri, linked.html, csp, linked.tool,
                      page_origin)


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
