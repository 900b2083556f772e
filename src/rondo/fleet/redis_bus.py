"""A change bus on Redis pub/sub (`rondo[redis]`): one channel per server, every worker subscribed.

`publish` never waits for Redis: it puts the change on a bounded queue (an identical change
already waiting is not queued twice) and returns; one publisher thread per bus sends the queue
with `PUBLISH`, each command bounded by the timeout rondo sets (`timeout`, default 1 s, for
connecting and for the reply). So a stalled or unreachable Redis never holds the event loop or
a handler. Each worker reads the channel with the asyncio client on its serving loop and
delivers there. Messages are `{"k": kind, "p": payload}` JSON; anything else on the channel is
dropped, so a stray publisher cannot inject a notification kind the server does not have.

While Redis is away: a change whose `PUBLISH` fails (or times out) is delivered to this
worker's listeners only, and for the next `RETRY_SECONDS` every further change is too, without
trying Redis; other workers miss those changes (they are not retried: a change notification
says "read again", and the next change that gets through says it again). A change that finds the
queue full (`max_queue`) is delivered here only, at once. One error is logged per outage.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import deque
from typing import Any

import msgspec

from .bus import MAX_PAYLOAD, Deliver, check_change

log = logging.getLogger("rondo.fleet")

DEFAULT_CHANNEL = "rondo:changes"
SUBSCRIBE_TIMEOUT = 5.0
RETRY_SECONDS = 0.5
PUBLISH_TIMEOUT = 1.0  # seconds: connecting to Redis, and waiting for one PUBLISH's reply
MAX_QUEUE = 1024  # changes waiting to be published


class RedisBus:
    """Fan changes out to every worker subscribed to `channel` on the Redis at `url`.
    `timeout` bounds each connection attempt and each `PUBLISH`; at most `max_queue` changes
    wait to be published (see the module's docstring for what happens beyond)."""

    def __init__(self, *, url: str, channel: str = DEFAULT_CHANNEL,
                 timeout: float = PUBLISH_TIMEOUT, max_queue: int = MAX_QUEUE) -> None:
        if not isinstance(url, str) or not url:
            raise TypeError("url must be a redis:// URL string")
        if not isinstance(channel, str) or not channel:
            raise TypeError("channel must be a non-empty str")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= 60:
            raise ValueError("timeout must be a number of seconds in (0, 60]")
        if isinstance(max_queue, bool) or not isinstance(max_queue, int) or max_queue < 1:
            raise ValueError("max_queue must be a positive integer")
        try:
            import redis
            import redis.asyncio
        except ImportError:
            raise ImportError("RedisBus needs the redis package: pip install 'rondo-mcp[redis]'") from None
        self.channel = channel
        self._url = url
        self.timeout = float(timeout)
        self.max_queue = max_queue
        self._client = redis.Redis.from_url(url, socket_timeout=self.timeout,
                                            socket_connect_timeout=self.timeout)
        self._async: Any = None
        self._pubsub: Any = None
        self._task: asyncio.Task[None] | None = None
        self._deliver: Deliver | None = None
        # The publisher: a queue of changes, the thread that sends them, and the outage state.
        self._queue: deque[tuple[str, str]] = deque()
        self._waiting: set[tuple[str, str]] = set()
        self._wake = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None
        self._down_until = 0.0
        self._down = False
        self.lost = 0  # changes other workers never got (Redis away, or the queue full)

    def attach(self, deliver: Deliver) -> None:
        if self._deliver is not None:
            raise ValueError("a RedisBus serves one server; make one per server")
        self._deliver = deliver

    def publish(self, kind: str, payload: str) -> None:
        """Queue one change for every worker and return at once; from any thread."""
        if not check_change(kind, payload):
            raise ValueError(f"not a change a bus carries: {kind!r}")
        change = (kind, payload)
        full = False
        with self._wake:
            if change not in self._waiting:  # a change already waiting says the same
                if len(self._queue) >= self.max_queue:
                    full = True
                    self.lost += 1
                else:
                    self._queue.append(change)
                    self._waiting.add(change)
                    self._wake.notify()
                    if self._thread is None:
                        self._thread = threading.Thread(target=self._send, daemon=True,
                                                        name=f"rondo-bus-{self.channel}")
                        self._thread.start()
        if full:
            log.error("rondo.fleet: %d changes wait for Redis; delivering %s on this worker only",
                      self.max_queue, kind)
        if (full or self._task is None) and self._deliver is not None:
            # Not subscribed (no HTTP lifespan yet): no echo comes, so deliver here now.
            self._deliver(kind, payload)

    def _send(self) -> None:
        """The publisher thread: send each queued change, bounded by the timeout."""
        while True:
            with self._wake:
                while not self._queue:
                    self._wake.wait()
                change = self._queue.popleft()
                self._waiting.discard(change)
            kind, payload = change
            if time.monotonic() < self._down_until:
                self._here_only(kind, payload)
                continue
            try:
                self._client.publish(self.channel, msgspec.json.encode({"k": kind, "p": payload}))
            except Exception as exc:  # an outage must not break the handler that changed something
                self._down_until = time.monotonic() + RETRY_SECONDS
                if not self._down:
                    self._down = True
                    log.error("rondo.fleet: could not publish to Redis (%s); changes reach this "
                              "worker only until it is back", type(exc).__name__)
                self._here_only(kind, payload)
                continue
            if self._down:
                self._down = False
                log.warning("rondo.fleet: publishing to Redis again (%d changes did not reach "
                            "the other workers)", self.lost)

    def _here_only(self, kind: str, payload: str) -> None:
        with self._wake:
            self.lost += 1
        if self._task is not None and self._deliver is not None:
            self._deliver(kind, payload)  # unsubscribed, publish() delivered it already

    def pending(self) -> int:
        """How many changes wait to be published."""
        with self._wake:
            return len(self._queue)

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
