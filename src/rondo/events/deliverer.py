"""Webhook delivery for one process: a task that takes each new occurrence (from an in-process
queue, or claimed from a shared log's consumer group so one worker delivers each) and POSTs it,
signed, to every matching subscription, recording each subscription's last outcome."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import TYPE_CHECKING, Any

from .types import iso
from .webhook import WebhookError, parse_secret

if TYPE_CHECKING:
    from .extension import Events

log = logging.getLogger("rondo.events")
Batch = list[tuple[str, str, dict[str, Any]]]  # (event type, cursor, occurrence)


class Deliverer:
    """Reads the extension's log, types, subscriptions and `Delivery` through it (`use_redis`
    may swap the log and store after it is made)."""

    def __init__(self, events: Events) -> None:
        self.events = events
        self.queue: asyncio.Queue[tuple[str, str, dict[str, Any]]] | None = None
        self.task: asyncio.Task[None] | None = None
        self.delivered = 0  # webhook POSTs accepted by this process (for tests and metrics)

    def start(self) -> None:
        """Start delivering, if not already and if an event loop runs."""
        if self.task is not None and not self.task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self.queue is None:
            self.queue = asyncio.Queue(maxsize=10_000)
        self.task = loop.create_task(self._deliver_forever())

    def enqueue(self, name: str, cursor: str, occurrence: dict[str, Any]) -> None:
        """An occurrence just appended to an in-process log, to deliver."""
        self.start()
        assert self.queue is not None
        self.queue.put_nowait((name, cursor, occurrence))

    async def stop(self) -> None:
        task, self.task = self.task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.events.delivery.aclose()

    async def _next_batch(self) -> Batch:
        events = self.events
        claim = getattr(events.log, "claim", None)
        if events.log.shared and claim is not None:
            names = [n for n, t in events.types.items() if "webhook" in t.delivery]
            if not names:
                await asyncio.sleep(1.0)
                return []
            batch: Batch = await claim(names, events.consumer, 1.0, events.reclaim_after)
            return batch
        assert self.queue is not None
        return [await self.queue.get()]

    async def _deliver_forever(self) -> None:
        while True:
            try:
                batch = await self._next_batch()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("events: reading the log for webhook delivery failed; retrying",
                            exc_info=True)
                await asyncio.sleep(1.0)
                continue
            for name, cursor, occurrence in batch:
                await self._deliver(name, cursor, occurrence)
                done = getattr(self.events.log, "done", None)
                if self.events.log.shared and done is not None:
                    await done(name, cursor)

    async def _deliver(self, name: str, cursor: str, occurrence: dict[str, Any]) -> None:
        declared = self.events.types.get(name)
        if declared is None:
            return
        subs = [s for s in await self.events.subscriptions.for_event(name)
                if s.get("active") and declared.match(s["arguments"], occurrence["data"])]
        body = json.dumps({**occurrence, "cursor": cursor}, separators=(",", ":")).encode()
        await asyncio.gather(*(self._post(sub, occurrence["eventId"], body) for sub in subs))

    async def _post(self, sub: dict[str, Any], event_id: str, body: bytes) -> None:
        try:
            await self.events.delivery.send(sub["url"], parse_secret(sub["secret"]), event_id, body,
                                            {"X-MCP-Subscription-Id": sub["id"]})
        except WebhookError as exc:
            sub = {**sub, "lastError": exc.category or "connection_refused"}
            log.info("events: delivery to subscription %s failed (%s)", sub["id"], sub["lastError"])
        else:
            self.delivered += 1
            sub = {**sub, "lastDeliveryAt": iso(time.time()), "lastError": None}
        with contextlib.suppress(Exception):
            if await self.events.subscriptions.get(sub["id"]) is not None:
                await self.events.subscriptions.put(sub)
