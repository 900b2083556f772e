# file: docs/snippets/mrtr_fallback.py
import asyncio

import rondo
from rondo import elicit
from rondo.client import CallToolResult, Client

server = rondo.Server("calendar")
LINK = elicit.url("Connect your calendar", "https://calendar.example.com/connect")
CODE = elicit.form("Open https://calendar.example.com/connect and paste the code shown", {
    "type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]})


@server.tool
def connect(ctx: rondo.Context) -> str:
    answer = ctx.ask(
        "connect", LINK,
        fallback=CODE,  # asked instead when the client has no URL mode
        on_unsupported="This client cannot ask its user. Ask the user for the code shown at "
                       "https://calendar.example.com/connect and call connect_with_code(code=...).",
    )
    if answer.content is not None:  # the form was asked
        return f"connected with code {answer.content['code']}"
    return f"link {answer.action}"


def user(request) -> dict:
    if request.mode == "url":
        return {"action": "accept"}
    return {"action": "accept", "content": {"code": "1234"}}


async def call(**client_options) -> CallToolResult:
    options = {"on_elicit": user, **client_options}
    async with Client(server, protocol="2026-07-28", **options) as client:
        return await client.call_tool("connect")


async def main() -> None:
    assert (await call(elicit_modes=("form", "url"))).text == "link accept"
    assert (await call(elicit_modes=("form",))).text == "connected with code 1234"
    no_elicitation = await call(on_elicit=None)
    assert no_elicitation.is_error and no_elicitation.text.startswith("This client cannot ask")


asyncio.run(main())
print("url, form fallback, readable tool error")
