"""Replay stores for one-time tokens (`seal(..., once=True)`).

A store answers one question atomically: "is this the first time this id is consumed?". Entries
only need to outlive the token they guard, so each is kept for the ttl `open` passes (the time
left until the token expires, plus the clock-skew allowance), then forgotten.
"""

from __future__ import annotations

import math
import time
from _thread import allocate_lock  # threading.Lock itself, without importing threading
from collections.abc import Callable
from typing import Any

from ..wire.errors import SERVER_BUSY, McpError
from ..wire.logs import logger
from .codec import ReplayStore

__all__ = ["MemoryReplayStore", "RedisReplayStore", "ReplayStore", "StoreFull"]

log = logger("rondo.state")

_RESERVED = 0
_USED = 1
_UNRESERVED = "\0unreserved"  # the share tokens this store never reserved are counted in


class StoreFull(McpError):
    """No room left in the one-time store for this principal: the seal is refused (the
    request answers this error), so valid tokens already out keep working."""

    def __init__(self) -> None:
        super().__init__(SERVER_BUSY, "Server busy: too many one-time request states "
                                      "outstanding for this client; try again later")


class MemoryReplayStore:
    """In-process store: bounded, with expiring entries. Right for a single worker only
    (several workers, or restarts: `RedisReplayStore`).

    A one-time token takes its place when sealed (`reserve`): at most `max_per_principal`
    sealed and not yet opened per principal, and `max_entries` places in all; a full store
    refuses the seal (`StoreFull`), never a valid token. Opening it (`consume`) marks the place
    used until the token expires (it then no longer counts towards the principal's share). A token
    this store never reserved (sealed before a restart, or by another worker) is taken while
    there is room and refused when there is none: failing closed keeps a replay out.
    """

    def __init__(
        self, max_entries: int = 100_000, *, max_per_principal: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        for name, value in (("max_entries", max_entries), ("max_per_principal", max_per_principal)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int")
            if value < 1:
                raise ValueError(f"{name} must be at least 1")
        if not callable(clock):
            raise TypeError("clock must be callable")
        self.max_entries = max_entries
        self.max_per_principal = max_per_principal
        self._clock = clock
        self._deadlines: dict[str, float] = {}
        self._state: dict[str, tuple[int, str | None]] = {}  # id -> (reserved/used, principal)
        self._per_principal: dict[str | None, int] = {}
        self._heap: list[tuple[float, str]] = []
        self._lock = allocate_lock()

    def reserve(self, token_id: str, ttl: float, principal: str | None = None) -> bool:
        """Take a place for a token about to be sealed; False when the store (or this
        principal's share of it) is full."""
        now = self._clock()
        with self._lock:
            self._forget_expired(now)
            if (len(self._deadlines) >= self.max_entries
                    or self._per_principal.get(principal, 0) >= self.max_per_principal):
                log.warning("rondo.state: one-time store full (%d live entries, %d for this "
                            "principal): refusing a new one-time seal",
                            len(self._deadlines), self._per_principal.get(principal, 0))
                return False
            self._insert(token_id, now + max(ttl, 0.0), _RESERVED, principal)
            return True

    def consume(self, token_id: str, ttl: float) -> bool:
        now = self._clock()
        with self._lock:
            self._forget_expired(now)
            known = self._state.get(token_id)
            if known is not None:
                if known[0] == _USED:
                    return False
                # Used: it no longer counts towards its principal's outstanding share.
                self._state[token_id] = (_USED, _UNRESERVED)
                self._release(known[1])
                return True
            if token_id in self._deadlines:
                return False
            if len(self._deadlines) >= self.max_entries:
                log.warning(
                    "rondo.state: memory replay store is full (%d live entries); refusing "
                    "one-time tokens until entries expire",
                    self.max_entries,
                )
                return False
            self._insert(token_id, now + max(ttl, 0.0), _USED, _UNRESERVED)
            return True

    def _insert(self, token_id: str, deadline: float, state: int, principal: str | None) -> None:
        self._deadlines[token_id] = deadline
        self._state[token_id] = (state, principal)
        if state == _RESERVED:
            self._per_principal[principal] = self._per_principal.get(principal, 0) + 1
        from heapq import heappush  # here: a server without one-time tokens never loads it

        heappush(self._heap, (deadline, token_id))

    def _release(self, principal: str | None) -> None:
        left = self._per_principal[principal] - 1
        if left:
            self._per_principal[principal] = left
        else:
            del self._per_principal[principal]

    def _forget_expired(self, now: float) -> None:
        heap, deadlines = self._heap, self._deadlines
        while heap and heap[0][0] <= now:
            from heapq import heappop  # only once something was inserted

            deadline, token_id = heappop(heap)
            if deadlines.get(token_id) == deadline:
                del deadlines[token_id]
                state, principal = self._state.pop(token_id)
                if state == _RESERVED:
                    self._release(principal)

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
