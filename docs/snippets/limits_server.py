# file: docs/snippets/limits_server.py
import asyncio

import rondo
from rondo.testing import connect

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}

server = rondo.Server("bounded", state=None, max_uri_length=2048, max_listen_streams=500)


@server.resource("file:///data/{name}")
def data(name: str) -> str:
    return f"contents of {name}"


@server.tool
def crash() -> str:
    """Fails with something private in its message."""
    raise RuntimeError("password=hunter2")


async def main() -> None:
    conn = connect(server)

    async def call(rid: int, method: str, params: dict) -> dict:
        response = await conn.send({"jsonrpc": "2.0", "id": rid, "method": method,
                                    "params": {**params, "_meta": META}})
        assert response is not None
        return response

    # A `{var}` never yields `/`, `..` or a control character: the URI does not match.
    escaped = await call(1, "resources/read", {"uri": "file:///data/%2e%2e%2fetc%2fpasswd"})
    assert escaped["error"]["code"] == -32602 and escaped["error"]["message"] == "Resource not found"

    # Unexpected exceptions are masked; the server log has the traceback under the reference.
    crashed = await call(2, "tools/call", {"name": "crash", "arguments": {}})
    text = crashed["result"]["content"][0]["text"]
    print(text)
    assert text.startswith("Internal error in tool 'crash' (reference ") and "hunter2" not in text


asyncio.run(main())
