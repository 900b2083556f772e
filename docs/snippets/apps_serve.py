# file: docs/snippets/apps_serve.py
import asyncio

import rondo
from rondo.apps import Apps, AppsError, Csp
from rondo.apps.client import AppsClient, tool_view

server = rondo.Server("docs-apps")
apps = server.extension(Apps())  # advertises extensions["io.modelcontextprotocol/ui"]

# A view: one HTML5 document served at a ui:// URI, with what the host's sandbox may allow.
table = apps.view(
    "ui://orders/table",
    html="<!doctype html><html><body><table id='orders'></table></body></html>",
    title="Orders",
    csp=Csp(connect_domains=("https://api.example.com",)),  # origins only: no paths
    prefers_border=True,
)


@apps.tool(view=table)  # renders in the table; any client still gets text content
def list_orders(status: str = "open") -> list[dict[str, object]]:
    """List orders by status."""
    return [{"id": 1, "status": status}, {"id": 2, "status": status}]


@apps.tool(view=table, visibility=["app"])  # only the view calls it (its refresh button)
def refresh_orders() -> str:
    """Reload the orders from the warehouse."""
    return "reloaded"


async def main() -> None:
    # A host declares the extension (AppsClient) and reads a tool's view, checked and typed.
    async with rondo.Client(server, extensions=[AppsClient()]) as host:
        linked = await tool_view(host, "list_orders")
        assert linked is not None and linked.html.startswith("<!doctype html>")
        assert linked.meta.csp is not None
        assert linked.meta.csp.connect_domains == ("https://api.example.com",)
        assert linked.meta.prefers_border is True
        # The policy a host puts on the view's frame: only what the view declared.
        assert "connect-src 'self' https://api.example.com;" in linked.meta.policy()
        assert [t.name for t in await host.list_tools()] == ["list_orders", "refresh_orders"]
        assert (await host.call_tool("refresh_orders")).text == "reloaded"  # a view's call

    # A client without the extension: the same tools, and text content it can use.
    async with rondo.Client(server) as plain:
        assert '"status":"open"' in (await plain.call_tool("list_orders")).text.replace(" ", "")

    try:
        apps.view("ui://bad", html="<!doctype html><p>x</p>",
                  csp={"connectDomains": ["https://api.example.com/v1"]})
    except AppsError as exc:
        print("refused:", exc)  # csp.connectDomains: 'https://api.example.com/v1' is not an origin


asyncio.run(main())
