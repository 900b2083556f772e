"""A small MCP Apps server: one view with a CSP, a tool rendering in it, and an app-only tool
that asks the user; and a view made with `rondo.apps.page()` (rondo's own wiring) for the
stock table, whose button calls an app-only tool that asks the user too (tests/apps: driven in
Chromium by page_in_chromium.mjs). Over stdio for tests/apps (served through `rondo.proxy`); over HTTP with
`--port N` for the interop checks (interop/ts_apps_client_check.mjs,
interop/inspector_apps_check.py)."""

from __future__ import annotations

import os
import sys

import rondo
from rondo import elicit
from rondo.apps import Apps, Csp, page

PAGE = "<!doctype html><html><body><p>orders</p></body></html>"

server = rondo.Server("apps-upstream", state=rondo.StatePolicy(secret=b"apps-interop-" * 3))
apps = server.extension(Apps())
table = apps.view("ui://orders/table", html=PAGE,
                  csp=Csp(connect_domains=("https://api.example.com",)), prefers_border=True)


@apps.tool(view=table)
def orders() -> str:
    """List orders."""
    return "2 orders"


@apps.tool(view=table, visibility=["app"])
def confirm(order: int, ctx: rondo.Context) -> str:
    """Confirm an order once the user agrees (the view's button)."""
    answer = ctx.ask("ok", elicit.form("Confirm the order?", {
        "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}))
    return f"confirmed {order}" if answer.accepted and answer.content["ok"] else "not confirmed"


STOCK_BODY = ("<h3>Stock</h3><p id='input'>-</p><div id='rows'>loading...</div>"
              "<button id='restock'>Restock tea</button><p id='out'>-</p>")
STOCK_SCRIPT = """
  view.onInput((args) => { document.getElementById("input").textContent = JSON.stringify(args); });
  view.onResult((result) => view.table(document.getElementById("rows"), view.data(result)));
  document.getElementById("restock").onclick = async () => {
    const out = document.getElementById("out");
    out.textContent = "waiting...";
    try { out.textContent = view.text(await view.call("restock", {item: "tea"})); }
    catch (e) { out.textContent = "error " + e.code + ": " + e.message; }
  };
"""
STYLE = "table{border-collapse:collapse}td,th{border:1px solid #999;padding:2px 6px}"
STOCK = apps.view("ui://stock/table", prefers_border=True, html=page(
    title="Stock", style=STYLE, body=STOCK_BODY, script=STOCK_SCRIPT))
# The same page on the official App (ext-apps' app-with-deps.js, loaded from an origin the view
# declares: the browser test serves the pinned file there and names it in APPS_TEST_SDK_ORIGIN).
SDK_ORIGIN = os.environ.get("APPS_TEST_SDK_ORIGIN", "https://cdn.apps.test")
SDK = f"{SDK_ORIGIN}/ext-apps@2.0.4/app-with-deps.js"
STOCK_OFFICIAL = apps.view("ui://stock/official", prefers_border=True,
                           csp=Csp(resource_domains=(SDK_ORIGIN,)),
                           html=page(title="Stock", style=STYLE, body=STOCK_BODY,
                                     script=STOCK_SCRIPT, sdk=SDK))


@apps.tool(view=STOCK)
def stock(shelf: str = "A") -> list[dict[str, object]]:
    """The stock on a shelf, as a table in its view."""
    return [{"item": "tea", "count": 3, "shelf": shelf}, {"item": "coffee", "count": 0, "shelf": shelf}]


@apps.tool(view=STOCK_OFFICIAL, name="stock_official")
def stock_official(shelf: str = "A") -> list[dict[str, object]]:
    """The stock on a shelf, in the view built on the official App."""
    return stock(shelf)


@apps.tool(view=STOCK, visibility=["app"])
def restock(item: str, ctx: rondo.Context) -> str:
    """Restock an item, asking how many (the table's button)."""
    answer = ctx.ask("count", elicit.form(f"How many {item}?", {
        "type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}))
    return f"restocked {answer.content['count']} {item}" if answer.accepted else "not restocked"


if __name__ == "__main__":
    if "--port" in sys.argv:
        server.run_http(port=int(sys.argv[sys.argv.index("--port") + 1]))
    else:
        server.run_stdio()
