# file: docs/snippets/legacy_errors.py
import asyncio

import rondo
from rondo import sampling
from rondo.legacy import AskError, ClientCannotAnswer
from rondo.testing import connect

server = rondo.Server("summaries")


@server.tool
async def summarize(text: str, ctx: rondo.Context) -> str:
    """Ask the client's model; fall back when this client cannot sample."""
    try:
        answer = await ctx.ask("summary", sampling.create_message([f"Summarize: {text}"], 60))
    except ClientCannotAnswer:  # it did not declare `sampling` at initialize
        return text[:20] + "..."
    except AskError as exc:  # timed out, refused, ...
        return f"could not summarize: {exc}"
    return answer.text


async def main() -> str:
    conn = connect(server)
    await conn.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    response = await conn.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "summarize", "arguments": {"text": "a very long text about many things"}}})
    return response["result"]["content"][0]["text"]


assert asyncio.run(main()) == "a very long text abo..."
print("fallback used")
