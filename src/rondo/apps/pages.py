"""`page(...)`: a self-contained view page for tools that need no build step.

The page's script gets one object, `view` (receive the tool's input and result, call a server
tool, render a table, read a form), and the page reports its size to the host. The wiring is
either rondo's own (`wiring.js`, a few dozen lines speaking the extension's postMessage
protocol, inlined: the page loads nothing) or, with `sdk=` the URL of the official app bundle
(`@modelcontextprotocol/ext-apps`'s `app-with-deps.js`), the official `App` class behind the
same `view` object. Either way rondo needs no Node: the official bundle is the page's to load.
"""

from __future__ import annotations

import html as _html
import json
import re
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from .meta import AppsError

_CLOSE = re.compile(r"</(script|style)", re.IGNORECASE)

# The official SDK behind the same `view` object: App's callbacks fill it, callServerTool calls.
_OFFICIAL = """%(load)s
const appInfo = %(info)s;
const seen = {input: undefined, partial: undefined, result: undefined, cancelled: undefined,
              context: undefined};
const handlers = {input: [], partial: [], result: [], cancelled: [], context: [], teardown: []};
function deliver(kind, value) { seen[kind] = value; handlers[kind].forEach((fn) => fn(value)); }
const on = (kind) => (fn) => { handlers[kind].push(fn); if (seen[kind] !== undefined) fn(seen[kind]); };
const app = new App(appInfo, {}, {autoResize: true});
let connected;
const view = {
  app, hostContext: {},
  onInput: on("input"), onPartialInput: on("partial"), onResult: on("result"),
  onCancelled: on("cancelled"), onHostContext: on("context"),
  onTeardown: (fn) => { handlers.teardown.push(fn); },
  call: (name, args) => connected.then(() => app.callServerTool({name, arguments: args || {}})),
  openLink: (url) => connected.then(() => app.openLink({url: String(url)})),
  message: (text) => connected.then(() => app.sendMessage(
    {role: "user", content: [{type: "text", text: String(text)}]})),
  log: (level, data) => { connected.then(() => app.sendLog({level, data})); },
  text: (r) => ((r && r.content) || []).filter((c) => c.type === "text").map((c) => c.text).join("\\n"),
  data: (r) => { if (r && r.structuredContent !== undefined) return r.structuredContent;
                 try { return JSON.parse(view.text(r)); } catch (e) { return undefined; } },
  table: (element, rows) => (%(table)s)(element, rows),
  values: (form) => (%(values)s)(form),
};
app.ontoolinput = (params) => deliver("input", params.arguments || {});
app.ontoolinputpartial = (params) => deliver("partial", params.arguments || {});
app.ontoolresult = (result) => deliver("result", result);
app.ontoolcancelled = (params) => deliver("cancelled", params.reason || "");
app.onhostcontextchanged = (params) => {
  Object.assign(view.hostContext, params);
  deliver("context", view.hostContext);
};
app.onteardown = async () => { await Promise.all(handlers.teardown.map((fn) => fn())); return {}; };
(%(script)s)(view);
connected = app.connect().then(() => {
  view.hostContext = app.getHostContext() || {};
  deliver("context", view.hostContext);
});
"""


@cache
def _wiring() -> str:
    return resources.files(__package__).joinpath("wiring.js").read_text("utf-8")


def _helpers() -> tuple[str, str]:
    """The `table` and `values` helpers, taken from the built-in wiring so both agree."""
    text = _wiring()
    table = text[text.index("table: function"):text.index("values: function")]
    values = text[text.index("values: function"):text.index("  };\n  window.addEventListener")]
    return (table.removeprefix("table: ").rstrip().rstrip(","),
            values.removeprefix("values: ").rstrip().rstrip(","))


def _js(value: Any) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(value).replace("</", "<\\/").replace("<!--", "<\\!--")


def _inline(text: str, what: str) -> str:
    if _CLOSE.search(text) or "<!--" in text:
        raise AppsError(f"{what} must not contain '</script', '</style' or '<!--': it is "
                        "inlined in the page")
    return text


def page(
    *,
    title: str = "View",
    body: str = "",
    script: str = "",
    style: str = "",
    sdk: str | None = None,
    sdk_script: str | None = None,
    app_name: str = "rondo-view",
    app_version: str = "1.0.0",
) -> str:
    """An HTML5 page for `apps.view(uri, html=page(...))`.

    - `body`: the page's HTML (trusted: it is yours);
    - `script`: JavaScript run with `view` in scope before the host connects, e.g.
      `view.onResult(r => view.table(document.getElementById("t"), view.data(r)))`;
    - `style`: CSS for the page;
    - `sdk`: the URL of the official `@modelcontextprotocol/ext-apps` app bundle
      (`app-with-deps.js`) to use instead of rondo's wiring; declare its origin in the view's
      `csp.resource_domains` (registration refuses the page otherwise). `view.app` is then
      the official `App` for everything else it offers.
    - `sdk_script`: the official app SDK inlined instead, as a classic script defining a global
      `McpApps` (what `esbuild --bundle --format=iife --global-name=McpApps` makes of
      `@modelcontextprotocol/ext-apps`): the page then loads nothing.
    """
    for name, value in (("title", title), ("body", body), ("script", script), ("style", style),
                        ("app_name", app_name), ("app_version", app_version)):
        if not isinstance(value, str):
            raise AppsError(f"page(): {name} must be a str, got {type(value).__name__}")
    user = "function (view) {\n" + _inline(script, "script") + "\n}"
    info = {"name": app_name, "version": app_version}
    head = [f"<meta charset=\"utf-8\"><title>{_html.escape(title)}</title>"]
    if style:
        head.append(f"<style>{_inline(style, 'style')}</style>")
    if sdk is not None and sdk_script is not None:
        raise AppsError("page(): give sdk= (a URL) or sdk_script= (the bundle's text), not both")
    if sdk is None and sdk_script is None:
        code = f"({_wiring().rstrip()})({_js(info)}, {user});"
        tail = f"<script>\n{code}\n</script>"
    else:
        table, values = _helpers()
        fill = {"info": _js(info), "table": table, "values": values, "script": user}
        if sdk is not None:
            parts = urlsplit(sdk)
            if parts.scheme not in ("http", "https") or not parts.netloc or any(
                    c.isspace() or c in "\"'<>" for c in sdk):
                raise AppsError(f"page(): sdk must be an http(s) URL of the ext-apps app bundle, "
                                f"got {sdk!r}")
            # modulepreload names the bundle where the view's asset check sees it: its origin
            # must be declared in the view's CSP, or registration says so.
            head.append(f'<link rel="modulepreload" href="{_html.escape(sdk)}">')
            code = _OFFICIAL % {**fill, "load": f"import {{ App }} from {_js(sdk)};"}
            tail = f"<script type=\"module\">\n{code}</script>"
        else:
            if not isinstance(sdk_script, str) or "McpApps" not in sdk_script:
                raise AppsError("page(): sdk_script must be the text of a bundle defining the "
                                "global McpApps (esbuild --format=iife --global-name=McpApps)")
            bundle = _CLOSE.sub(lambda m: "<\\/" + m.group(1), sdk_script)
            code = _OFFICIAL % {**fill, "load": "const { App } = McpApps;"}
            tail = (f"<script>\n{bundle}\n</script>\n"
                    f"<script>\n(() => {{\n{code}}})();\n</script>")
    return ("<!doctype html>\n<html><head>" + "".join(head) + "</head>\n<body>\n" + body
            + "\n" + tail + "\n</body></html>\n")
