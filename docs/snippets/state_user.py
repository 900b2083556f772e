# file: docs/snippets/state_user.py
import asyncio

import rondo
from rondo.testing import principal
from rondo.userstate import ABSENT, MemoryStore, UserState

server = rondo.Server("shop")
server.extension(UserState(MemoryStore()))  # RedisStore(url) or FileStore(path) in production


@server.tool
async def add_to_cart(item: str, ctx: rondo.Context) -> str:
    """Add an item to the caller's cart (kept for a day)."""
    while True:  # compare-and-set: a concurrent add from the same user is never lost
        cart = await ctx.user_state.get("cart")
        new = [*(cart or []), item]
        if await ctx.user_state.cas("cart", ABSENT if cart is None else cart, new, ttl=86_400):
            return f"{len(new)} item(s) in your cart"


@server.tool
def checkout(ctx: rondo.Context) -> str:
    """Check out once: the cart is taken atomically, so a double click cannot pay twice."""
    cart = ctx.user_state.sync.take("cart")
    return "nothing to check out" if cart is None else f"paid for {', '.join(cart)}"


async def main() -> None:
    async with rondo.Client(server, auth=principal("alice")) as alice:
        await alice.call_tool("add_to_cart", {"item": "tea"})
        assert (await alice.call_tool("add_to_cart", {"item": "jam"})).text == "2 item(s) in your cart"
        async with rondo.Client(server, auth=principal("bob")) as bob:  # bob has his own cart
            assert (await bob.call_tool("checkout")).text == "nothing to check out"
        twice = await asyncio.gather(alice.call_tool("checkout"), alice.call_tool("checkout"))
        assert sorted(r.text for r in twice) == ["nothing to check out", "paid for tea, jam"]
    async with rondo.Client(server) as anonymous:  # no verified principal: no shared state
        refused = await anonymous.call_tool("checkout")
        assert refused.is_error and "needs an authenticated caller" in refused.text


asyncio.run(main())
