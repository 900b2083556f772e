"""The client's in-memory transport (what `rondo.Client(server)` uses) refuses misuse clearly:
requests before start or after close, and answers that do not match the request."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import rondo
from rondo.client import ProtocolError, TransportError
from rondo.client.transports.memory import MemoryTransport


def server() -> rondo.Server:
    s = rondo.Server("memory-edges")

    @s.tool
    def t() -> str:
        """T."""
        return "t"

    return s


async def nothing(message: dict[str, Any]) -> None:
    return None


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 10))


def test_requests_before_start_and_after_close_are_refused() -> None:
    async def go() -> None:
        transport = MemoryTransport(server())
        with pytest.raises(TransportError, match="not running"):
            await transport.request({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        with pytest.raises(TransportError, match="not running"):
            await transport.notify({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await transport.start(nothing)
        await transport.close()
        with pytest.raises(TransportError, match="not running"):
            await transport.request({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})

    run(go())


@pytest.mark.parametrize("rid", [1.5, True])
def test_an_answer_for_another_id_is_a_protocol_error(rid: Any) -> None:
    """The server answers an invalid id with `id: null`; the transport does not pass that off
    as the answer to the request."""

    async def go() -> None:
        transport = MemoryTransport(server())
        await transport.start(nothing)
        try:
            with pytest.raises(ProtocolError, match="answered id None"):
                await transport.request({"jsonrpc": "2.0", "id": rid, "method": "tools/list"})
        finally:
            await transport.close()

    run(go())
