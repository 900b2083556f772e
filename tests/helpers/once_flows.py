"""The one-time request state tests' server and flows, for the memory and the Redis replay
store alike (tests/state/test_hardening_once.py, test_hardening_once_redis.py): `once_server`
(the principal is the test client's `auth`), `first_round`, and `anonymous_flows`, four
flows over HTTP from two client addresses with no principal."""

from __future__ import annotations

import asyncio
from typing import Any

import rondo
from rondo import elicit
from rondo.state import StatePolicy
from tests.helpers.helpers_core import ALL_CAPS, Client, http_headers, request

COLOR = elicit.form("Color?", {"type": "object", "properties": {"c": {"type": "string"}}})
ANSWER = {"color": {"action": "accept", "content": {"c": "red"}}}


def once_server(store: Any, name: str = "once") -> rondo.Server:
    # The principal is the test's `auth` value (a trusted transport would set it).
    policy = StatePolicy(secret=b"k" * 32, once=True, replay_store=store,
                         principal=lambda ctx: ctx.auth)
    server = rondo.Server(name, state=policy)

    @server.tool
    def pick(ctx: rondo.Context) -> str:
        """Asks once."""
        return f"picked {ctx.ask('color', COLOR).content['c']}"

    return server


def first_round(client: Client) -> dict[str, Any]:
    return client.call("tools/call", {"name": "pick", "arguments": {}}, caps=ALL_CAPS)


def anonymous_flows(store: Any, kind: str = "async def") -> list[dict[str, Any]]:
    """A once-only server on `store` naming no principal, its `pick` a plain `def` (the
    express lane) or an `async def` (the general one); three whole flows from 10.0.0.1, then
    one from 10.0.0.2, over HTTP (httpx's ASGI transport carries the address): each flow's
    last answer (the first round's, when that was refused)."""
    import httpx

    server = rondo.Server("once-http", state=StatePolicy(secret=b"k" * 32, once=True,
                                                         replay_store=store))
    if kind == "def":
        @server.tool
        def pick(ctx: rondo.Context) -> str:
            """Asks once."""
            return f"picked {ctx.ask('color', COLOR).content['c']}"
    else:
        @server.tool
        async def pick(ctx: rondo.Context) -> str:
            """Asks once."""
            return f"picked {(await ctx.ask('color', COLOR)).content['c']}"

    app = server.asgi()

    async def post(address: str, params: dict[str, Any]) -> dict[str, Any]:
        message = request("tools/call", params, caps=ALL_CAPS)
        transport = httpx.ASGITransport(app=app, client=(address, 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            answer: dict[str, Any] = (await http.post("/mcp", json=message,
                                                      headers=http_headers(message))).json()
            return answer

    async def flow(address: str) -> dict[str, Any]:
        first = await post(address, {"name": "pick", "arguments": {}})
        if "error" in first:
            return first
        return await post(address, {"name": "pick", "arguments": {}, "inputResponses": ANSWER,
                                    "requestState": first["result"]["requestState"]})

    async def main() -> list[dict[str, Any]]:
        return [await flow("10.0.0.1"), await flow("10.0.0.1"), await flow("10.0.0.1"),
                await flow("10.0.0.2")]

    return asyncio.run(main())
