"""What an `HttpApp` needs around serving: its lifespan (the fleet bus, the server's
`@server.lifespan` hooks, the end of legacy sessions), the ASGI lifespan protocol that runs it,
and the start-up note on a per-process state key."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from .asgi import Receive, Send

if TYPE_CHECKING:
    from ...server.server import Server

log = logging.getLogger("rondo.http")


@contextlib.asynccontextmanager
async def running(server: Server, legacy: Any) -> AsyncIterator[None]:
    bus = server.core.subscriptions.bus  # fleet hook: subscribed before serving
    if bus is not None:
        await bus.start()
    try:
        async with server.started():
            try:
                yield
            finally:
                if legacy is not None:
                    await legacy.shutdown()  # sessions end before the user's resources
    finally:
        if bus is not None:
            await bus.stop()


async def lifespan_protocol(lifespan: Any, receive: Receive, send: Send) -> None:
    """Run `lifespan()` (an async context manager) under the ASGI lifespan protocol."""
    message = await receive()
    if message["type"] != "lifespan.startup":
        return
    try:
        context = lifespan()
        await context.__aenter__()
    except Exception as exc:
        log.error("lifespan start-up failed", exc_info=exc)
        await send({"type": "lifespan.startup.failed", "message": f"{type(exc).__name__}: {exc}"})
        return
    await send({"type": "lifespan.startup.complete"})
    while (await receive())["type"] != "lifespan.shutdown":
        pass
    try:
        await context.__aexit__(None, None, None)
    except Exception as exc:
        log.error("lifespan shutdown failed", exc_info=exc)
        await send({"type": "lifespan.shutdown.failed", "message": f"{type(exc).__name__}: {exc}"})
        return
    await send({"type": "lifespan.shutdown.complete"})


def check_start(server: Server) -> None:
    """At start-up: a fleet replica refuses a per-process key (raises); one process notes it."""
    from ...core.replicas import check_fleet  # fleet hook: a replica refuses a per-process key

    check_fleet(server)
    policy = server.state_policy
    if policy is None:
        return
    from ...state.keys import ENV_KEYS

    if policy.ephemeral:
        # Its own logger, so one process that means it can silence exactly this note.
        logging.getLogger("rondo.http.state_key").warning(
            "rondo: %s is not set, so request state is sealed with a key made at start-up. "
            "Fine for one process (like a demo); with several workers, or after a restart, a "
            "client's next round would be refused. To share keys, set %s (`python -m "
            "rondo.state` prints one). To silence this note for one process, "
            "logging.getLogger(\"rondo.http.state_key\").disabled = True.",
            ENV_KEYS, ENV_KEYS,
        )

