# file: docs/snippets/apps_host.py
import asyncio
from typing import Any

import msgspec

import rondo
from rondo import elicit
from rondo.apps import Apps, page, tool_visibility
from rondo.apps.client import AppsClient, tool_view

server = rondo.Server("docs-apps-host")
apps = server.extension(Apps())
ticket = apps.view("ui://tickets/view", html=page(
    title="Ticket",
    body="<p id='t'></p><button id='close'>Close</button><p id='out'></p>",
    script="""
      view.onResult((r) => { document.getElementById("t").textContent = view.text(r); });
      document.getElementById("close").onclick = async () => {
        const done = await view.call("close_ticket", {ticket: 7});
        document.getElementById("out").textContent = view.text(done);
      };
    """))


@apps.tool(view=ticket)
def open_ticket(title: str) -> str:
    """Open a ticket and show it."""
    return f"ticket 7: {title}"


@apps.tool(view=ticket, visibility=["app"])  # the view's Close button
def close_ticket(ticket: int, ctx: rondo.Context) -> str:
    """Close a ticket, asking why."""
    why = ctx.ask("why", elicit.form(f"Why close ticket {ticket}?", {
        "type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]}))
    return f"ticket {ticket} closed: {why.content['reason']}" if why.accepted else "still open"


async def on_view_call(client: rondo.Client, params: dict[str, Any]) -> dict[str, Any]:
    """What a host does with a view's `tools/call`: the tool must be visible to views; the call
    goes through the host's client, which runs any input round (its `on_elicit` shows the form
    to the user) and resolves with the final result, the one handed back to the view."""
    listed = {t.name: t for t in await client.list_tools()}
    if params["name"] not in listed or "app" not in tool_visibility(listed[params["name"]].meta):
        raise PermissionError(f"views may not call {params['name']!r}")
    result = await client.call_tool(params["name"], params.get("arguments") or {})
    plain: dict[str, Any] = msgspec.to_builtins(result)
    return plain


async def host(protocol: str) -> None:
    shown: list[str] = []

    def user(question: Any) -> dict[str, Any]:  # the host's form, filled by the user
        shown.append(question.message)
        return {"action": "accept", "content": {"reason": "fixed"}}

    async with rondo.Client(server, protocol=protocol, extensions=[AppsClient()],
                            on_elicit=user) as client:
        linked = await tool_view(client, "open_ticket")  # the view to put in a sandboxed frame
        assert linked is not None and linked.meta.policy().startswith("default-src 'none'")
        opened = await client.call_tool("open_ticket", {"title": "printer"})  # its tool-result
        assert opened.text == "ticket 7: printer"
        closed = await on_view_call(client, {"name": "close_ticket", "arguments": {"ticket": 7}})
        assert closed["content"] == [{"type": "text", "text": "ticket 7 closed: fixed"}]
        assert shown == ["Why close ticket 7?"]  # one question, one answer, on either era
        print(protocol, "->", closed["content"][0]["text"])


for era in ("2026-07-28", "2025-11-25"):
    asyncio.run(host(era))
