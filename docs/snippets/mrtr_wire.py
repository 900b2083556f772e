# file: docs/snippets/mrtr_wire.py
import asyncio
import json

import rondo
from rondo import elicit
from rondo.testing import connect

server = rondo.Server("wire")
NAME = elicit.form("Your name?", {
    "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})


@server.tool
def hello(ctx: rondo.Context) -> str:
    """Greet the user by name."""
    return f"Hello, {ctx.ask('name', NAME).content['name']}!"


async def main() -> None:
    conn = connect(server)
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
    params = {"name": "hello", "_meta": meta}

    first = await conn.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    interim = first["result"]
    print(json.dumps(interim["inputRequests"], indent=1))
    assert interim["resultType"] == "input_required"

    retry = {**params,  # same method and params, a new id, plus the answers and the state
             "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
             "requestState": interim["requestState"]}
    final = await conn.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": retry})
    assert final["result"]["content"][0]["text"] == "Hello, Ada!"

    wrong = {**retry, "inputResponses": {"name": {"action": "accept", "content": {"name": 7}}}}
    error = (await conn.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": wrong}))
    print(error["error"])  # -32602, naming the key 'name'


asyncio.run(main())
