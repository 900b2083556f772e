"""The server the per-user state fleet test runs on each worker (`rondo run ... --redis URL`).

Bearer tokens `user-NAME` verify as the user NAME (a test verifier: the point is the principal,
not the token format). Every answer names the worker process that produced it.
"""

import os

import rondo
from rondo.auth import ResourceServer
from rondo.auth.errors import InvalidToken
from rondo.auth.principal import Principal
from rondo.userstate import UserState

PID = os.getpid()


class Tokens:
    cache_ttl = 0.0

    async def verify(self, token: str) -> Principal:
        if not token.startswith("user-"):
            raise InvalidToken()
        return Principal.from_claims({"sub": token[5:], "iss": "https://as.example"})


server = rondo.Server("fleet-state", state=None, auth=ResourceServer(
    resource="http://127.0.0.1/mcp", issuer="https://as.example", verifier=Tokens()))
server.extension(UserState())  # a memory store: `--redis` makes it the fleet's Redis


@server.tool
async def put(key: str, value: str, ctx: rondo.Context) -> str:
    """Store a value for the caller."""
    await ctx.user_state.set(key, value, ttl=60)
    return f"{PID}"


@server.tool
async def read(key: str, ctx: rondo.Context) -> str:
    """Read the caller's value."""
    return f"{PID} {await ctx.user_state.get(key, '<none>')}"


@server.tool
async def take(key: str, ctx: rondo.Context) -> str:
    """Take the caller's value, once."""
    return f"{PID} {await ctx.user_state.take(key, '<gone>')}"
