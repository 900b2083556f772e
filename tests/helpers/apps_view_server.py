"""A server with a view-backed tool, for the MCP Apps host tests: `rondo dev` hosting it in
Chromium (tests/cli/test_cli_dev_apps_browser.py) and the official TypeScript client and the
Inspector CLI reading it (interop/ts_apps_host_check.mjs).

The view is `rondo.apps.page()` with the official ext-apps view script inlined (`App`, bundled
by tests/peers/apps/build.mjs into a classic script defining `McpApps`): it shows the tool's
input and result, calls `price` (a tool only views see) from a button, and `place_order`, which
asks the user a question first (an input round started from inside the view).

    rondo dev tests/helpers/apps_view_server.py --apps-bridge tests/peers/apps/dist/ext-apps-host.js
    python tests/helpers/apps_view_server.py --port 8000      # over HTTP, at /mcp
"""

from __future__ import annotations

import sys
from pathlib import Path

import rondo
from rondo import elicit
from rondo.apps import Apps, Csp, page

ROOT = Path(__file__).resolve().parents[2]
APP_SCRIPT = ROOT / "tests" / "peers" / "apps" / "dist" / "ext-apps-app.js"
VIEW = "ui://orders/view.html"
DECLARED = "https://img.example.com"  # declared for images; nothing answers there

server = rondo.Server("orders", "1.0.0", state=rondo.StatePolicy(secret=b"apps-host-tests-" * 2))
apps = server.extension(Apps())

BODY = """<h3>Order</h3>
<div>input: <pre id="input">-</pre></div>
<div>result: <pre id="result">-</pre></div>
<button id="price">Price</button> <pre id="price-out">-</pre>
<button id="order">Place order</button> <pre id="order-out">-</pre>
<pre id="csp">-</pre>"""

SCRIPT = """
const show = (id, text) => { document.getElementById(id).textContent = text; };
let item = "";
document.addEventListener("securitypolicyviolation", (e) => show("csp", "blocked " + e.blockedURI));
view.onInput((args) => {
  item = args.item; show("input", JSON.stringify(args));
  // an image from an origin the view did not declare: the host's policy refuses it
  const img = new Image(); img.src = "https://undeclared.example.net/pixel.png"; document.body.append(img);
});
view.onResult((result) => show("result", view.text(result)));
const clicked = (button, out, tool) => { document.getElementById(button).onclick = async () => {
  show(out, "waiting...");
  try { show(out, view.text(await view.call(tool, {item}))); } catch (e) { show(out, "error: " + e.message); }
}; };
view.app.onteardown = async () => { show("input", "torn down"); return {}; };  // ui/resource-teardown
clicked("price", "price-out", "price");
clicked("order", "order-out", "place_order");
"""

order_view = apps.view(
    VIEW,
    html=page(title="Order", body=BODY, script=SCRIPT, style="body{font:14px system-ui;margin:8px}pre{white-space:pre-wrap;word-break:break-all}",
              sdk_script=APP_SCRIPT.read_text(), app_name="orders-view"),
    csp=Csp(resource_domains=(DECLARED,)), prefers_border=True)


@apps.tool(view=order_view)
def show_order(item: str, quantity: int = 1) -> str:
    """Show an order in its view."""
    return f"{quantity} x {item}"


@apps.tool(view=order_view, visibility=["app"])
def price(item: str) -> str:
    """What an item costs (only views call this)."""
    return f"{item} costs {len(item)} coins"


@apps.tool(view=order_view, visibility=["app"])
def place_order(item: str, ctx: rondo.Context) -> str:
    """Place the order, asking whom to ship it to."""
    answer = ctx.ask("ship_to", elicit.form(
        f"Ship the {item} to whom?",
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}))
    if not answer.accepted:
        return "order not placed"
    return f"{item} ships to {answer.content['name']}"


if __name__ == "__main__":
    server.run_http(port=int(sys.argv[sys.argv.index("--port") + 1]))
