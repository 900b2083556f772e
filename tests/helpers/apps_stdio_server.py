"""A small MCP Apps server over stdio (tests/apps: served through `rondo.proxy`): one view with a
CSP, a tool rendering in it, an app-only tool, and an app-only tool that asks the user."""

from __future__ import annotations

import rondo
from rondo import elicit
from rondo.apps import Apps, Csp

PAGE = "<!doctype html><html><body><p>orders</p></body></html>"

server = rondo.Server("apps-upstream", state=None)
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
    server.run_stdio()
