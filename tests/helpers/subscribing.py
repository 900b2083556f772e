"""A client subscribed to a resource URI on either era, for the gateway tests that relay
`notifications/resources/updated`: `subscribed(server, protocol, uri)` is a client of `server`
that sent `resources/subscribe` (2025-11-25: updates come as notifications) or holds a listen
stream naming `uri` (2026-07-28: its notes pumped into the same queue); `pumping` is that pump
alone; `touch_until_heard` calls a tool until an update arrives, within a bound (the upstream
subscription may settle just after the downstream one)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from rondo.client import Client

Heard = asyncio.Queue[dict[str, Any]]


@asynccontextmanager
async def pumping(sub: AsyncIterable[dict[str, Any]], heard: Heard) -> AsyncIterator[None]:
    """Every note `sub` yields is put on `heard` while the block runs; the pump is cancelled
    when it ends."""
    async def pump() -> None:
        async for note in sub:
            heard.put_nowait(note)

    task = asyncio.ensure_future(pump())
    try:
        yield
    finally:
        task.cancel()


@asynccontextmanager
async def subscribed(server: Any, protocol: str, uri: str) -> AsyncIterator[tuple[Client, Heard]]:
    """A client of `server` on `protocol`, subscribed to `uri`, and the queue its notes reach."""
    heard: Heard = asyncio.Queue()
    if protocol == "2025-11-25":
        async with Client(server, protocol=protocol, on_notification=heard.put_nowait) as client:
            assert await client.request("resources/subscribe", {"uri": uri}) == {}
            yield client, heard
    else:
        async with Client(server, protocol=protocol) as client, \
                client.listen(resource_uris=[uri]) as sub, pumping(sub, heard):
            yield client, heard


async def touch_until_heard(heard: Heard, touch: Callable[[], Awaitable[None]],
                            wanted: Callable[[dict[str, Any]], bool] = lambda note: True,
                            ) -> dict[str, Any]:
    """Await `touch()` (which checks its own answer), then wait half a second for a note,
    until one that `wanted` accepts arrives; fails the test after 10 seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while True:
        assert loop.time() < deadline, "the upstream's update never reached the subscriber"
        await touch()
        try:
            got = await asyncio.wait_for(heard.get(), 0.5)
        except TimeoutError:
            continue
        if wanted(got):
            return got
