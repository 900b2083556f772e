"""A change bus on Redis pub/sub (`rondo[redis]`): one channel per server, every worker subscribed.

Publishing is one synchronous `PUBLISH` (short, on a nearby Redis), from any thread. Each worker
reads the channel with the asyncio client on its serving loop and delivers there. Messages are
`{"k": kind, "p": payload}` JSON; anything else on the channel is dropped, so a stray publisher
cannot inject a notification kind the server does not have.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import msgspec

from .bus import MAX_PAYLOAD, Deliver, check_change

log = logging.getLogger("rondo.fleet")

DEFAULT_CHANNEL = "rondo:changes"
SUBSCRIBE_TIMEOUT = 5.0
RETRY_SECONDS = 0.5


class RedisBus:
    """Fan changes out to every worker subscribed to `channel` on the Redis at `url`."""

    def __init__(self, *, url: str, channel: str = DEFAULT_CHANNEL) -> None:
        if not isinstance(url, str) or not url:
            raise TypeError("url must be a redis:// URL string")
        if not isinstance(channel, str) or not channel:
            raise TypeError("channel must be a non-empty str")
        try:
            import redis
            import redis.asyncio
        except ImportError:
            raise ImportError("RedisBus needs the redis package: pip install 'rondo-mcp[redis]'") from None
        self.channel = channel
        self._url = url
        self._client = redis.Redis.from_url(url)
        self._async: Any = None
        self._pubsub: Any = None
        self._task: asyncio.Task[None] | None = None
        self._deliver: Deliver | None = None

    def attach(self, deliver: Deliver) -> None:
        if self._deliver is not None:
            raise ValueError("a RedisBus serves one server; make one per server")
        self._deliver = deliver

    def publish(self, kind: str, payload: str) -> None:
        if not check_change(kind, payload):
            raise ValueError(f"not a change a bus carries: {kind!r}")
        try:
            self._client.publish(self.channel, msgspec.json.encode({"k": kind, "p": payload}))
        except Exception as exc:  # an outage must not break the handler that changed something
            log.error("rondo.fleet: could not publish %s to Redis (%s); delivering on this "
                      "worker only", kind, type(exc).__name__)
            if self._deliver is not None:
                self._deliver(kind, payload)
            return
        if self._task is None and self._deliver is not None:
            self._deliver(kind, payload)  # not subscribed (no HTTP lifespan yet): no echo comes

    async def start(self) -> None:
        if self._task is not None:
            return
        import redis.asyncio

        self._async = redis.asyncio.Redis.from_url(self._url)
        self._pubsub = self._async.pubsub()
        await self._pubsub.subscribe(self.channel)
        # Wait for the confirmation: from here on no change published anywhere is missed.
        deadline = asyncio.get_running_loop().time() + SUBSCRIBE_TIMEOUT
        while True:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                raise RuntimeError(f"Redis did not confirm the subscription to {self.channel!r}")
            message = await self._pubsub.get_message(timeout=left)
            if message is not None and message.get("type") == "subscribe":
                break
        self._task = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        while True:
            try:
                message = await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=None)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis went away: the client reconnects and resubscribes
                log.warning("rondo.fleet: Redis bus read failed (%s); retrying", type(exc).__name__)
                await asyncio.sleep(RETRY_SECONDS)
                continue
            if message is not None and message.get("type") == "message":
                self.receive(message.get("data"))

    def receive(self, data: Any) -> None:
        """Deliver one raw channel message if it is a well-formed change (else drop it)."""
        if not isinstance(data, bytes) or len(data) > MAX_PAYLOAD + 64 or self._deliver is None:
            return
        try:
            change = msgspec.json.decode(data)
        except (msgspec.DecodeError, RecursionError):
            return
        if not isinstance(change, dict):
            return
        kind, payload = change.get("k"), change.get("p")
        if isinstance(kind, str) and isinstance(payload, str) and check_change(kind, payload):
            self._deliver(kind, payload)

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
            self._pubsub = None
        if self._async is not None:
            with contextlib.suppress(Exception):
                await self._async.aclose()
            self._async = None

    def __repr__(self) -> str:  # the URL may hold a password: never show it
        return f"<RedisBus channel={self.channel!r}>"
