"""A server with a view-backed tool, for the MCP Apps host tests (`rondo dev` in Chromium,
the interop checks). The view is one HTML page inlining the official ext-apps view script
(`App`, bundled by tests/peers/apps/build.mjs); it shows the tool's input and result, calls
`price` (a tool only views see) from a button, and `place_order`, which asks the user a
question first (an input round started from inside the view).

    rondo dev tests/helpers/apps_view_server.py --apps-bridge tests/peers/apps/dist/ext-apps-host.js
"""

from __future__ import annotations

import os
from pathlib import Path

import rondo
from rondo import elicit

ROOT = Path(__file__).resolve().parents[2]
APP_SCRIPT = ROOT / "tests" / "peers" / "apps" / "dist" / "ext-apps-app.js"
MIME = "text/html;profile=mcp-app"
VIEW = "ui://orders/view.html"
# An origin the view declares for images (nothing answers there: the test only reads the CSP
# the view runs under), and one it does not.
DECLARED = os.environ.get("APPS_TEST_DECLARED", "https://img.example.com")

server = rondo.Server("orders", "1.0.0", state=None)

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>order</title>
<style>body{font:14px system-ui,sans-serif;margin:8px}pre{margin:2px 0}</style></head>
<body>
<h3>Order</h3>
<div>input: <pre id="input">-</pre></div>
<div>result: <pre id="result">-</pre></div>
<button id="price">Price</button> <pre id="price-out">-</pre>
<button id="order">Place order</button> <pre id="order-out">-</pre>
<pre id="csp">-</pre>
<script>%(app)s</script>
<script>
"use strict";
const show = (id, text) => { document.getElementById(id).textContent = text; };
const text = (r) => (r.content || []).map(c => c.text).join(" ");
let item = "";
document.addEventListener("securitypolicyviolation", (e) => show("csp", "blocked " + e.blockedURI));
const app = new McpApps.App({name: "orders-view", version: "1.0.0"});
app.ontoolinput = (p) => { item = p.arguments.item; show("input", JSON.stringify(p.arguments)); };
app.ontoolresult = (r) => show("result", text(r));
document.getElementById("price").onclick = async () => {
  try { show("price-out", text(await app.callServerTool({name: "price", arguments: {item}}))); }
  catch (e) { show("price-out", "error: " + e.message); }
};
document.getElementById("order").onclick = async () => {
  show("order-out", "waiting...");
  try { show("order-out", text(await app.callServerTool({name: "place_order", arguments: {item}}))); }
  catch (e) { show("order-out", "error: " + e.message); }
};
app.connect().then(() => {
  document.body.dataset.connected = "yes";
  // an image from an origin the view did not declare is refused by the host's policy
  const img = new Image(); img.src = "https://undeclared.example.net/pixel.png"; document.body.append(img);
}, (e) => { console.error("connect failed: " + e.message); show("result", "connect failed: " + e.message); });
</script></body></html>
"""


@server.resource(VIEW, mime_type=MIME, meta={"ui": {"csp": {"resourceDomains": [DECLARED]},
                                                     "prefersBorder": True}})
def order_view() -> str:
    """The order view."""
    return PAGE % {"app": APP_SCRIPT.read_text()}


@server.tool(meta={"ui": {"resourceUri": VIEW}, "ui/resourceUri": VIEW})
def show_order(item: str, quantity: int = 1) -> str:
    """Show an order in its view."""
    return f"{quantity} x {item}"


@server.tool(meta={"ui": {"resourceUri": VIEW, "visibility": ["app"]}})
def price(item: str) -> str:
    """What an item costs (only views call this)."""
    return f"{item} costs {len(item)} coins"


@server.tool(meta={"ui": {"resourceUri": VIEW, "visibility": ["app"]}})
def place_order(item: str, ctx: rondo.Context) -> str:
    """Place the order, asking whom to ship it to."""
    answer = ctx.ask("ship_to", elicit.form(
        f"Ship the {item} to whom?",
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}))
    if not answer.accepted:
        return "order not placed"
    return f"{item} ships to {answer.content['name']}"
