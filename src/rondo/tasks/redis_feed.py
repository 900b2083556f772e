"""The Redis task store's change feed: which task was just written, told to every replica.

Every write of `RedisTaskStore` publishes the task's id on one channel (`<prefix>changes`) in
the same MULTI/EXEC as the write. Each event loop that waits on tasks holds one subscription and
calls the wake functions registered (`on_change`) for that id only, so a parked task's keeper
sleeps until its own task changes, on whichever replica the write happened. A message can be
missed while the subscription is down (Redis restarting): when it is back, every registered
function is called once, and each keeper reads its task again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("rondo.tasks")

RETRY_SECONDS = 0.5
MAX_ID = 256  # a task id is 32 characters; anything longer on the channel is not ours

Wake = Callable[[], None]


class Feed:
    """One subscription to the change channel on one event loop, and who waits for what."""

    def __init__(self, client: Any, channel: str, loop: asyncio.AbstractEventLoop) -> None:
        self.client = client
        self.channel = channel
        self.loop = loop
        self.listeners: dict[str, list[Wake]] = {}
        self._task: asyncio.Task[None] | None = None

    def on_change(self, task_id: str, wake: Wake) -> Callable[[], None]:
        listeners = self.listeners.setdefault(task_id, [])
        listeners.append(wake)
        if self._task is None or self._task.done():
            self._task = self.loop.create_task(self._read())

        def stop() -> None:
            with contextlib.suppress(ValueError):
                listeners.remove(wake)
            if not listeners and self.listeners.get(task_id) is listeners:
                del self.listeners[task_id]

        return stop

    def _wake(self, task_id: str) -> None:
        for wake in tuple(self.listeners.get(task_id, ())):
            wake()

    def _wake_all(self) -> None:
        for listeners in tuple(self.listeners.values()):
            for wake in tuple(listeners):
                wake()

    async def _read(self) -> None:
        """Subscribe, then deliver; on a failure, subscribe again (and wake everybody: a
        change may have passed meanwhile). Ends when nobody waits any more."""
        while self.listeners:
            pubsub = self.client.pubsub()
            try:
                await pubsub.subscribe(self.channel)
                while True:  # the confirmation first: from then on nothing is missed
                    message = await pubsub.get_message(timeout=None)
                    if message is not None and message.get("type") == "subscribe":
                        break
                self._wake_all()  # anything written before the subscription is read again
                while self.listeners:
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                    if message is None or message.get("type") != "message":
                        continue
                    data = message.get("data")
                    if isinstance(data, bytes) and len(data) <= MAX_ID:
                        self._wake(data.decode("ascii", "replace"))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("rondo.tasks: the task change feed failed (%s); subscribing again",
                            type(exc).__name__)
                await asyncio.sleep(RETRY_SECONDS)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
