# file: docs/snippets/apps_page.py
import asyncio

import rondo
from rondo.apps import Apps, page
from rondo.apps.client import AppsClient, tool_view

server = rondo.Server("docs-apps-page")
apps = server.extension(Apps())

# A table: the tool's result, rendered when the host sends it; a button calls another tool.
table = apps.view("ui://stock/table", html=page(
    title="Stock",
    body="<div id='rows'>loading...</div><button id='more'>Restock tea</button><p id='out'></p>",
    script="""
      view.onResult((result) => view.table(document.getElementById("rows"), view.data(result)));
      document.getElementById("more").onclick = async () => {
        const answer = await view.call("restock", {item: "tea", count: 10});
        document.getElementById("out").textContent = view.text(answer);
      };
    """,
))

# A form: the tool's input fills it, submitting calls a tool only the view may call.
form = apps.view("ui://stock/form", html=page(
    title="Order",
    body="<form id='f'><input name='item'><input name='count' type='number'>"
         "<button>Order</button></form><p id='out'></p>",
    script="""
      const f = document.getElementById("f");
      view.onInput((args) => { f.item.value = args.item || ""; });
      f.onsubmit = async (event) => {
        event.preventDefault();
        const answer = await view.call("place_order", view.values(f));
        document.getElementById("out").textContent = view.text(answer);
      };
    """,
))


@apps.tool(view=table)
def stock() -> list[dict[str, object]]:
    """Show the stock."""
    return [{"item": "tea", "count": 3}, {"item": "coffee", "count": 0}]


@apps.tool(view=table, visibility=["app"])
def restock(item: str, count: int) -> str:
    """Restock an item (the table's button)."""
    return f"{item}: +{count}"


@apps.tool(view=form)
def order_form(item: str = "") -> str:
    """Open the order form."""
    return f"Order form for {item or 'anything'}"


@apps.tool(view=form, visibility=["app"])
def place_order(item: str, count: int) -> str:
    """Place an order (the form's submit)."""
    return f"ordered {count} x {item}"


async def main() -> None:
    async with rondo.Client(server, extensions=[AppsClient()]) as host:
        linked = await tool_view(host, "stock")
        assert linked is not None and "view.table(" in linked.html
        assert "src=" not in linked.html  # self-contained: the wiring is inlined
        # What the buttons send is an ordinary tools/call:
        assert (await host.call_tool("place_order", {"item": "tea", "count": 2})).text == \
            "ordered 2 x tea"


asyncio.run(main())
