# file: docs/snippets/mrtr_ask.py
import asyncio

import rondo
from rondo import elicit
from rondo.client import Client, ElicitRequest

server = rondo.Server("shop")

SIZE = elicit.form("Which size?", {
    "type": "object",
    "properties": {"size": {"type": "string", "enum": ["S", "M", "L"]}},
    "required": ["size"],
})


def color_question(item: str) -> dict:
    return elicit.form(f"Which color for the {item}?", {
        "type": "object",
        "properties": {"color": {"type": "string"}},
        "required": ["color"],
    })


@server.tool
def order(item: str, ctx: rondo.Context) -> str:
    """Ask two questions, one round after the other; then place the order."""
    color = ctx.ask("color", color_question(item))  # round 1 ends here
    if not color.accepted:  # decline / cancel come back as values
        return "No order placed."
    size = ctx.ask("size", SIZE)  # round 2 ends here; `color` rides in the sealed state
    # Only now, after the last question, do anything that must happen once.
    return f"Ordered a {color.content['color']} {item}, size {size.content['size']}."


@server.tool
async def quick_order(item: str, ctx: rondo.Context) -> str:
    """Ask both questions in one round (async handlers await)."""
    answers = await ctx.ask_all({"color": color_question(item), "size": SIZE})
    return f"{answers['color'].content['color']} {item}, size {answers['size'].content['size']}"


asked = []


def user(request: ElicitRequest) -> dict:
    print("asked:", request.message)
    asked.append(request.message)
    field = next(iter(request.requested_schema["properties"]))
    return {"action": "accept", "content": {field: {"color": "teal", "size": "M"}[field]}}


async def main() -> None:
    async with Client(server, on_elicit=user) as client:
        ordered = (await client.call_tool("order", {"item": "shirt"})).text
        print(ordered)
        assert ordered == "Ordered a teal shirt, size M."
        assert asked == ["Which color for the shirt?", "Which size?"]  # one round each

        asked.clear()
        quick = (await client.call_tool("quick_order", {"item": "hat"})).text
        print(quick)
        assert quick == "teal hat, size M"
        assert sorted(asked) == ["Which color for the hat?", "Which size?"]  # one round


asyncio.run(main())
