# file: docs/snippets/transports_memory.py
import asyncio

import rondo
from rondo.testing import connect

server = rondo.Server("memory-demo", state=None)


@server.tool
def double(n: int) -> int:
    """Double a number."""
    return 2 * n


async def main() -> None:
    conn = connect(server)  # raw JSON-RPC, JSON-encoded both ways as a socket would be
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    response = await conn.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                "params": {"name": "double", "arguments": {"n": 21}, "_meta": meta}})
    assert response["result"]["structuredContent"] == 42
    assert response["result"]["resultType"] == "complete"


asyncio.run(main())
