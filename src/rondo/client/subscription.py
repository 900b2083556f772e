"""`subscriptions/listen` from the client: one stream of change notifications."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from rondo.client.errors import ClientError, ProtocolError
from rondo.client.transports import Json

if TYPE_CHECKING:
    from rondo.client.session import Client


class Subscription:
    """One `subscriptions/listen` request: its acknowledgement, then its notifications."""

    def __init__(self, client: Client, wanted: Json) -> None:
        self.client = client
        self.wanted = wanted
        self.id: Any = None
        self.acknowledged: Json | None = None
        self._queue: asyncio.Queue[Json | None] = asyncio.Queue()
        self._acked = asyncio.Event()
        self._task: asyncio.Task[Any] | None = None

    async def __aenter__(self) -> Subscription:
        if self.client.era != "modern":
            raise ClientError("subscriptions/listen needs a 2026-07-28 server")
        await self._open("subscriptions/listen", {"notifications": self.wanted}, "acknowledge")
        return self

    async def _open(self, method: str, params: Json, verb: str) -> None:
        """Send the long-lived request on a stream of its own and wait (the client's timeout)
        for the server's first notification on it (`_deliver` sets `acknowledged`); the
        request's own error if it failed first, else "server did not {verb} {method}"."""
        self.id = self.client.follow_stream(self)
        self._task = asyncio.create_task(
            self.client._rpc(method, params, timeout=None, request_id=self.id))
        self._task.add_done_callback(lambda _: self._finish())
        waiter = asyncio.ensure_future(self._acked.wait())
        try:
            await asyncio.wait({waiter, self._task}, timeout=self.client.timeout,
                               return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # cancelled while opening: the stream must not outlive us
            await self.__aexit__()
            raise
        finally:
            waiter.cancel()
        if self.acknowledged is None:
            await self.__aexit__()
            if self._task.done() and not self._task.cancelled() and self._task.exception():
                raise self._task.exception()  # type: ignore[misc]
            raise ProtocolError(f"server did not {verb} {method}")

    async def __aexit__(self, *exc: object) -> None:
        self.client.unfollow_stream(self.id)
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(BaseException):  # ending the stream is the point
                await self._task
        elif self._task is not None and not self._task.cancelled():
            self._task.exception()  # a stream that failed (its server gone) ended: seen
        self._finish()

    def _deliver(self, message: Json) -> None:
        if message.get("method") == "notifications/subscriptions/acknowledged":
            params = message.get("params") or {}
            self.acknowledged = params.get("notifications", {}) if isinstance(params, dict) else {}
            self._acked.set()
        else:
            self._queue.put_nowait(message)

    def _finish(self) -> None:
        self._queue.put_nowait(None)

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Json:
        message = await self._queue.get()
        if message is None:
            self._queue.put_nowait(None)  # stay finished for later readers
            raise StopAsyncIteration
        return message
