# file: docs/snippets/mrtr_capabilities.py
import asyncio

import rondo
from rondo import elicit, sampling
from rondo.testing import connect

server = rondo.Server("caps")
TOPIC = elicit.form("Which topic?", {
    "type": "object", "properties": {"topic": {"type": "string"}}, "required": ["topic"]})


@server.tool
def summary(ctx: rondo.Context) -> str:
    """Ask only for what this request's client declared; fall back otherwise."""
    if "elicitation" not in ctx.client_capabilities:
        return "Summary of everything (ask me with elicitation support to narrow it)."
    return f"Summary of {ctx.ask('topic', TOPIC).content['topic']}."


@server.tool
def poem(ctx: rondo.Context) -> str:
    """Needs the client's model: without sampling this is -32021."""
    return ctx.ask("llm", sampling.create_message("Write a haiku", 60)).text


async def main() -> None:
    conn = connect(server)

    async def call(name: str, caps: dict) -> dict:
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": caps}
        return await conn.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                "params": {"name": name, "_meta": meta}})

    plain = await call("summary", {})
    assert plain["result"]["resultType"] == "complete"
    asks = await call("summary", {"elicitation": {}})
    assert asks["result"]["resultType"] == "input_required"
    refused = await call("poem", {"elicitation": {}})
    print(refused["error"])  # -32021, data.requiredCapabilities == {"sampling": {}}
    assert refused["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}


asyncio.run(main())
