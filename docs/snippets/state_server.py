# file: docs/snippets/state_server.py
import asyncio
import secrets

import rondo
from rondo import InputRequired
from rondo.testing import connect

policy = rondo.StatePolicy(
    keys=[("k1", secrets.token_bytes(32))],  # in production: RONDO_STATE_KEYS (below)
    principal=lambda ctx: (ctx.auth or {}).get("sub"),  # who is asking, from trusted auth
    ttl=120,
)
server = rondo.Server("travel", state=policy)


@server.tool
def book(city: str, ctx: rondo.Context) -> object:
    """Quote first; book on the retry, trusting only the sealed quote."""
    if ctx.state is None:
        return InputRequired(state={"city": city, "quote": 120})
    return f"booked {ctx.state['city']} at {ctx.state['quote']} EUR"


async def main() -> None:
    alice = connect(server, auth={"sub": "alice"})
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    params = {"name": "book", "arguments": {"city": "Oslo"}, "_meta": meta}

    async def call(rid: int, extra: dict, conn=alice) -> dict:
        message = {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                   "params": {**params, **extra}}
        return await conn.send(message)

    first = (await call(1, {}))["result"]
    token = first["requestState"]
    print(first["resultType"], token[:40] + "...")
    assert first["resultType"] == "input_required"

    done = await call(2, {"requestState": token})
    print(done["result"]["content"][0]["text"])  # booked Oslo at 120 EUR
    assert done["result"]["content"][0]["text"] == "booked Oslo at 120 EUR"

    tampered = await call(3, {"requestState": token + "-TAMPERED"})
    print(tampered["error"]["code"], tampered["error"]["message"])  # -32602 ...
    assert tampered["error"]["code"] == -32602

    mallory = connect(server, auth={"sub": "mallory"})
    stolen = await call(4, {"requestState": token}, conn=mallory)
    print(stolen["error"]["code"])  # -32602: sealed for alice
    assert stolen["error"]["code"] == -32602

    other_city = await call(5, {"requestState": token, "arguments": {"city": "Paris"}})
    print(other_city["error"]["code"])  # -32602: sealed for other arguments
    assert other_city["error"]["code"] == -32602


asyncio.run(main())
