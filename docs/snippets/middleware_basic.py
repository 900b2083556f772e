# file: docs/snippets/middleware_basic.py
import asyncio

import rondo
from rondo import elicit
from rondo.client import Client
from rondo.middleware import RequestView

seen: list[str] = []


async def audit(request: RequestView, call_next) -> dict:
    """Server middleware: around every request, every MRTR round included."""
    result = await call_next(request)
    seen.append(f"{request.method} {request.name} retry={request.is_retry} "
                f"-> {result.get('resultType', 'complete')}")
    return result


async def closed_on_sundays(request: RequestView, call_next) -> dict:
    """Short-circuit: answer without running the handler."""
    if request.name == "order" and request.arguments and request.arguments.get("day") == "sun":
        return {"content": [{"type": "text", "text": "Closed on Sundays."}], "isError": True}
    return await call_next(request)


async def tenant(request: RequestView, call_next) -> object:
    """Per-component middleware: hands the handler a value through `extras`."""
    request.extras["tenant"] = "acme"
    return await call_next(request)


server = rondo.Server("shop", middleware=[audit, closed_on_sundays])
SIZE = elicit.form("Which size?", {
    "type": "object", "properties": {"size": {"type": "string"}}, "required": ["size"]})


@server.tool(middleware=[tenant])
def order(day: str, ctx: rondo.Context) -> str:
    size = ctx.ask("size", SIZE).content["size"]
    return f"{ctx.extras['tenant']}: one {size} shirt on {day}"


async def main() -> None:
    medium = lambda request: {"action": "accept", "content": {"size": "M"}}  # noqa: E731
    async with Client(server, on_elicit=medium) as client:
        assert (await client.call_tool("order", {"day": "mon"})).text == "acme: one M shirt on mon"
        closed = await client.call_tool("order", {"day": "sun"})
        assert closed.is_error and closed.text == "Closed on Sundays."
    assert seen == [
        "server/discover None retry=False -> complete",  # the client's first request
        "tools/call order retry=False -> input_required",  # round 1 ends with the question
        "tools/call order retry=True -> complete",  # round 2 carries the answer
        "tools/call order retry=False -> complete",  # short-circuited inside audit
    ], seen


asyncio.run(main())
print("\n".join(seen))
