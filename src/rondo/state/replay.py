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
_UNRESERVED = "\0unreserved"  # tokens this store never reserved: they count towards max_entries only


class StoreFull(McpError):
    """No room left in the one-time store: the seal is refused (the request answers this
    error), so valid tokens already out keep working. `scope` says whose limit was reached:
    "client" (this client's share) or "server" (the whole store, the last resort)."""

    def __init__(self, scope: str = "client") -> None:
        self.scope = scope
        where = "for this client" if scope == "client" else "on this server"
        super().__init__(SERVER_BUSY, f"Server busy: too many one-time request states "
                                      f"{where}; try again later")


class MemoryReplayStore:
    """In-process store: bounded, with expiring entries. Right for a single worker only
    (several workers, or restarts: `RedisReplayStore`).

    A one-time token takes its place when sealed (`reserve`) and keeps it, used or not, until
    the token expires: a used id must be remembered to refuse its replay. Each client (the
    `principal` the seal names) has two quotas: at most `max_per_principal` places sealed and
    not yet opened, and at most `max_live_per_principal` places in all (sealed or used). The
    whole store holds `max_entries`, a last resort that only many clients together reach. A
    refused seal raises nothing here: `reserve` answers False and `refusal(principal)` says
    whose limit it was; tokens already out always open. A token this store never reserved
    (sealed before a restart, or by another worker) is taken while the store has room and
    refused when it has none: failing closed keeps a replay out.
    """

    def __init__(
        self, max_entries: int = 100_000, *, max_per_principal: int = 10_000,
        max_live_per_principal: int = 20_000, clock: Callable[[], float] = time.monotonic,
    ) -> None:
        for name, value in (("max_entries", max_entries), ("max_per_principal", max_per_principal),
                            ("max_live_per_principal", max_live_per_principal)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int")
            if value < 1:
                raise ValueError(f"{name} must be at least 1")
        if not callable(clock):
            raise TypeError("clock must be callable")
        self.max_entries = max_entries
        self.max_per_principal = max_per_principal
        self.max_live_per_principal = max_live_per_principal
        self._clock = clock
        self._deadlines: dict[str, float] = {}
        self._state: dict[str, tuple[int, str | None]] = {}  # id -> (reserved/used, principal)
        self._outstanding: dict[str | None, int] = {}  # principal -> places sealed, not opened
        self._live: dict[str | None, int] = {}  # principal -> places held, sealed or used
        self._heap: list[tuple[float, str]] = []
        self._lock = allocate_lock()

    def reserve(self, token_id: str, ttl: float, principal: str | None = None) -> bool:
        """Take a place for a token about to be sealed; False when this principal's share (or,
        as a last resort, the whole store) is full."""
        now = self._clock()
        with self._lock:
            self._forget_expired(now)
            scope = self._full(principal)
            if scope is not None:
                log.warning("rondo.state: one-time store full %s (%d live entries, %d for this "
                            "client, %d of them unopened): refusing a new one-time seal",
                            "for one client" if scope == "client" else "on this server",
                            len(self._deadlines), self._live.get(principal, 0),
                            self._outstanding.get(principal, 0))
                return False
            self._insert(token_id, now + max(ttl, 0.0), _RESERVED, principal)
            return True

    def refusal(self, principal: str | None = None) -> StoreFull:
        """The error for a seal `reserve` refused: whose limit it reached."""
        with self._lock:
            return StoreFull(self._full(principal) or "client")

    def _full(self, principal: str | None) -> str | None:
        if (self._outstanding.get(principal, 0) >= self.max_per_principal
                or self._live.get(principal, 0) >= self.max_live_per_principal):
            return "client"
        if len(self._deadlines) >= self.max_entries:
            return "server"
        return None

    def consume(self, token_id: str, ttl: float) -> bool:
        now = self._clock()
        with self._lock:
            self._forget_expired(now)
            known = self._state.get(token_id)
            if known is not None:
                if known[0] == _USED:
                    return False
                # Used: it keeps its place (and its principal's) until it expires, but no
                # longer counts as unopened.
                self._state[token_id] = (_USED, known[1])
                self._release(self._outstanding, known[1])
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
            self._outstanding[principal] = self._outstanding.get(principal, 0) + 1
            self._live[principal] = self._live.get(principal, 0) + 1
        from heapq import heappush  # here: a server without one-time tokens never loads it

        heappush(self._heap, (deadline, token_id))

    @staticmethod
    def _release(counts: dict[str | None, int], principal: str | None) -> None:
        left = counts[principal] - 1
        if left:
            counts[principal] = left
        else:
            del counts[principal]

    def _forget_expired(self, now: float) -> None:
        heap, deadlines = self._heap, self._deadlines
        while heap and heap[0][0] <= now:
            from heapq import heappop  # only once something was inserted

            deadline, token_id = heappop(heap)
            if deadlines.get(token_id) == deadline:
                del deadlines[token_id]
                state, principal = self._state.pop(token_id)
                if state == _RESERVED:
                    self._release(self._outstanding, principal)
                if principal != _UNRESERVED:
                    self._release(self._live, principal)

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
