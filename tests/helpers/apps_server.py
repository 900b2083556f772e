"""A small MCP Apps server: one view with a CSP, a tool rendering in it, and an app-only tool
that asks the user. Over stdio for tests/apps (served through `rondo.proxy`); over HTTP with
`--port N` for the interop checks (interop/ts_apps_client_check.mjs,
interop/inspector_apps_check.py)."""

from __future__ import annotations

import sys

import rondo
from rondo import elicit
from rondo.apps import Apps, Csp

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


if __name__ == "__main__":
    if "--port" in sys.argv:
        server.run_http(port=int(sys.argv[sys.argv.index("--port") + 1]))
    else:
        server.run_stdio()
