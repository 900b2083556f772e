"""The server the per-user state fleet test runs on each worker (`rondo run ... --redis URL`).

Bearer tokens `user-NAME` verify as the user NAME (a test verifier: the point is the principal,
not the token format). Every answer names the worker process that produced it.
"""

import os

import rondo
from rondo.userstate import UserState
from tests.helpers.user_tokens import user_auth

PID = os.getpid()

server = rondo.Server("fleet-state", state=None, auth=user_auth())
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
