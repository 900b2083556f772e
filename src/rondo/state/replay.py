"""Replay stores for one-time tokens (`seal(..., once=True)`).

A store answers one question atomically: "is this the first time this id is consumed?". Entries
only need to outlive the token they guard, so each is kept for the ttl `open` passes (the time
left until the token expires, plus the clock-skew allowance), then forgotten.
"""

from __future__ import annotations

import heapq
import logging
import math
import threading
import time
from collections.abc import Callable
from typing import Any

from .codec import ReplayStore

__all__ = ["MemoryReplayStore", "RedisReplayStore", "ReplayStore"]

log = logging.getLogger("rondo.state")


class MemoryReplayStore:
    """In-process store: bounded, with expiring entries. Right for a single worker only.

    When full of live entries it refuses new ones (the token fails like a replay): failing closed
    keeps a replayed token out, at the cost of availability under a flood. Size it with
    `max_entries` (live entries = one-time tokens opened within one ttl).
    """

    def __init__(
        self, max_entries: int = 100_000, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int):
            raise TypeError("max_entries must be an int")
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        if not callable(clock):
            raise TypeError("clock must be callable")
        self.max_entries = max_entries
        self._clock = clock
        self._deadlines: dict[str, float] = {}
        self._heap: list[tuple[float, str]] = []
        self._lock = threading.Lock()

    def consume(self, token_id: str, ttl: float) -> bool:
        now = self._clock()
        with self._lock:
            self._forget_expired(now)
            if token_id in self._deadlines:
                return False
            if len(self._deadlines) >= self.max_entries:
                log.warning(
                    "rondo.state: memory replay store is full (%d live entries); refusing "
                    "one-time tokens until entries expire",
                    self.max_entries,
                )
                return False
            deadline = now + max(ttl, 0.0)
            self._deadlines[token_id] = deadline
            heapq.heappush(self._heap, (deadline, token_id))
            return True

    def _forget_expired(self, now: float) -> None:
        heap, deadlines = self._heap, self._deadlines
        while heap and heap[0][0] <= now:
            deadline, token_id = heapq.heappop(heap)
            if deadlines.get(token_id) == deadline:
                del deadlines[token_id]

    def __len__(self) -> int:
        with self._lock:
            self._forget_expired(self._clock())
            return len(self._deadlines)


class RedisReplayStore:
    """Shared store on Redis (`SET key 1 NX PX ttl`): every worker sharing it refuses a replay.

    Pass a ready `redis.Redis` client or a `url` (needs the `redis` package: `rondo[redis]`).
    Calls are synchronous and short (one round trip on a nearby Redis). A Redis failure
    propagates as an error of the server, never as "invalid state", so an outage is visible.
    """

    def __init__(
        self,
        client: Any = None,
        *,
        url: str | None = None,
        prefix: str = "rondo:state:used:",
    ) -> None:
        if (client is None) == (url is None):
            raise ValueError("pass exactly one of client= or url=")
        if not isinstance(prefix, str):
            raise TypeError("prefix must be a str")
        if url is not None:
            if not isinstance(url, str):
                raise TypeError("url must be a str")
            try:
                import redis
            except ImportError:
                raise ImportError(
                    "RedisReplayStore(url=...) needs the redis package: pip install 'rondo-mcp[redis]'"
                ) from None
            client = redis.Redis.from_url(url)
        elif not callable(getattr(client, "set", None)):
            raise TypeError("client must be a redis client (with a set() method)")
        self._client = client
        self._prefix = prefix

    def consume(self, token_id: str, ttl: float) -> bool:
        millis = max(1, math.ceil(ttl * 1000))
        return bool(self._client.set(self._prefix + token_id, b"1", nx=True, px=millis))
