# file: docs/snippets/legacy_one_handler.py
import asyncio

import rondo
from rondo import elicit
from rondo.testing import connect

server = rondo.Server("prefs")
COLOR = elicit.form(
    "Which color?",
    {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
)


@server.tool
def favorite_color(ctx: rondo.Context) -> str:
    """One handler for both eras."""
    answer = ctx.ask("color", COLOR)
    return f"likes {answer.content['color']}" if answer.accepted else "no answer"


async def legacy_client() -> str:
    """A 2025-11-25 client: initialize, then answer the server's elicitation/create request."""
    conn = connect(server)
    await conn.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "old-host", "version": "1"}}})
    await conn.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def on_message(msg: dict) -> None:
        if msg.get("method") == "elicitation/create":  # a request from the server
            answer = {"action": "accept", "content": {"color": "teal"}}
            reply = {"jsonrpc": "2.0", "id": msg["id"], "result": answer}
            asyncio.get_running_loop().create_task(conn.send(reply))

    response = await conn.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                "params": {"name": "favorite_color", "arguments": {}}}, on_message)
    return response["result"]["content"][0]["text"]


async def modern_client() -> str:
    """A 2026-07-28 client: input_required, then the retry carries the answer."""
    conn = connect(server)
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    params = {"name": "favorite_color", "arguments": {}, "_meta": meta}
    first = await conn.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    assert first["result"]["resultType"] == "input_required"
    retry = {**params, "requestState": first["result"]["requestState"],
             "inputResponses": {"color": {"action": "accept", "content": {"color": "teal"}}}}
    done = await conn.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": retry})
    return done["result"]["content"][0]["text"]


assert asyncio.run(legacy_client()) == "likes teal"
assert asyncio.run(modern_client()) == "likes teal"
print("both eras: likes teal")
