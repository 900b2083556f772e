"""`Subscription` (client/subscription.py): a listen stream whose opening is cancelled (its
opener stopped before the server acknowledged it, as a proxy's follower is when the proxy
stops) ends with it, rather than staying open as a request nobody reads."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rondo import Server
from rondo.client import Client


def test_a_listen_cancelled_while_opening_ends_its_request_and_its_routing() -> None:
    server = Server("s")

    @server.tool(description="Add.")
    def add(a: int, b: int) -> int:
        return a + b

    async def main() -> tuple[Any, bool, bool, bool]:
        async with Client(server) as client:
            started = asyncio.Event()
            ended: list[bool] = []

            async def unanswered(method: str, params: Any, **_: Any) -> Any:
                started.set()  # a server that never acknowledges the stream
                try:
                    await asyncio.get_running_loop().create_future()
                finally:
                    ended.append(True)

            client._rpc = unanswered  # type: ignore[method-assign]
            sub = client.listen(tools=True)
            opening = asyncio.ensure_future(sub.__aenter__())
            await asyncio.wait_for(started.wait(), 5)
            opening.cancel()
            with pytest.raises(asyncio.CancelledError, match="^$"):  # our cancel(), no message
                await opening
            task = sub._task
            assert task is not None
            return sub.id, task.cancelled(), bool(ended), sub.id in client._subscriptions

    stream_id, cancelled, ended, still_routed = asyncio.run(main())
    assert str(stream_id).startswith("listen-")
    assert cancelled and ended  # the request was cancelled and its coroutine ran its cleanup
    assert not still_routed  # no notification is routed to the abandoned subscription
