"""A proxy's upstream kept connected: started with the proxy, started again when it ends.

`supervised(...)` is the proxy's lifespan body. It connects the upstream (a failure fails the
start, unless `must_connect=False`), then a keeper task holds the connection: when a stdio
upstream's process exits (or writes what cannot be trusted) the keeper waits out a backoff,
spawns it again, lists what it serves again and carries on. While no upstream is connected
the proxy's components stay listed and each call is answered at once with -32603 "upstream
unavailable"; a call in flight when the process died gets the same. After `Restart.attempts`
failed starts in a row the keeper gives up (logged at ERROR) and the proxy answers every call
with that error until it is restarted itself. HTTP upstreams have no process to watch: a
request that fails fails on its own; the keeper only retries one that could not be reached at
start (`must_connect=False`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..client import Client, ClientError
from ..wire.errors import McpError

if TYPE_CHECKING:
    from ..server.server import Server
    from .upstream import Upstream

log = logging.getLogger("rondo.gateway")


@dataclass(frozen=True)
class Restart:
    """How an upstream is started again: after `first` seconds, doubling up to `most`; after
    `attempts` failed starts in a row, no more. An upstream that served for `steady` seconds
    before it ended starts the count again (one that dies at once backs off)."""

    first: float = 0.5
    most: float = 30.0
    attempts: int = 8
    steady: float = 30.0

    def __post_init__(self) -> None:
        if not (0 < self.first <= self.most) or self.steady < 0:
            raise ValueError("Restart needs 0 < first <= most and steady >= 0 (seconds)")
        if isinstance(self.attempts, bool) or not isinstance(self.attempts, int) \
                or self.attempts < 0:
            raise ValueError("Restart.attempts is a count, 0 or more (0: never restart)")

    def delay(self, failures: int) -> float:
        """Seconds to wait before the start that follows `failures` failed ones."""
        return float(min(self.first * 2 ** min(failures, 32), self.most))


Serving = Callable[["Server", "Upstream", Client], contextlib.AbstractAsyncContextManager[None]]


@contextlib.asynccontextmanager
async def supervised(server: Server, link: Upstream, name: str, serving: Serving, *,
                     must_connect: bool) -> AsyncIterator[None]:
    """Serve `link` for as long as the block runs (module docstring)."""
    ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    keeper = asyncio.create_task(_keep(server, link, name, serving, ready, must_connect))
    try:
        await asyncio.wait([ready, keeper], return_when=asyncio.FIRST_COMPLETED)
        if ready.done():
            ready.result()  # the first start's error, when it must connect
        else:
            keeper.result()
        yield
    finally:
        keeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await keeper


async def _keep(server: Server, link: Upstream, name: str, serving: Serving,
                ready: asyncio.Future[None], must_connect: bool) -> None:
    policy = link.restart
    failures = 0
    first = True
    while True:
        if not first:
            if failures >= policy.attempts:
                log.error("upstream %s: not started again after %d failed starts; its calls "
                          "answer 'upstream unavailable'", link.label, failures)
                if not ready.done():
                    ready.set_result(None)
                return
            await asyncio.sleep(policy.delay(failures))
        client = link.make_client()
        began = time.monotonic()
        try:
            try:
                await client.connect()
            except (ClientError, McpError, OSError) as exc:
                raise RuntimeError(f"proxy {name!r}: cannot reach its upstream: {exc}") from None
            async with serving(server, link, client):
                if not first:
                    log.warning("upstream %s: started again", link.label)
                if not ready.done():
                    ready.set_result(None)
                await _ended(client)
            log.warning("upstream %s: its process ended; starting it again", link.label)
        except RuntimeError as exc:
            if first and must_connect:
                ready.set_exception(exc)
                return
            log.warning("upstream %s: %s", link.label, _short(exc))
            if not ready.done():
                ready.set_result(None)  # a gateway serves its other upstreams meanwhile
        finally:
            await client.close()
        failures = 0 if time.monotonic() - began >= policy.steady else failures + 1
        first = False


async def _ended(client: Client) -> None:
    """Until the upstream's connection ends for good (a stdio process exiting); forever for
    transports with no such end."""
    wait_ended: Any = getattr(client.transport, "wait_ended", None)
    if wait_ended is None:
        await asyncio.Event().wait()
    await wait_ended()


def _short(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
