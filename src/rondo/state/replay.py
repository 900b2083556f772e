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
    "client" (this client's share) or "server" (the whole store, the last resort); `limit` and
    `name`, when given, which limit it was ("for this client (limit 20000,
    max_live_per_principal)")."""

    def __init__(self, scope: str = "client", limit: int | None = None, name: str = "") -> None:
        self.scope = scope
        where = "for this client" if scope == "client" else "on this server"
        if limit is not None:
            where += f" (limit {limit}, {name})"
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
            scope = self._full(principal) or "client"
            if scope == "server":
                return StoreFull(scope, self.max_entries, "max_entries")
            if self._outstanding.get(principal, 0) >= self.max_per_principal:
                return StoreFull(scope, self.max_per_principal, "max_per_principal")
            return StoreFull(scope, self.max_live_per_principal, "max_live_per_principal")

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


# Whom a place belongs to, in Redis key names: a digest, so principals (often e-mail addresses)
# and client addresses are not written to Redis in the clear.
def _client_tag(client: str | None) -> str:
    from hashlib import blake2b  # here: a server without a Redis one-time store never loads it

    raw = b"\0anonymous" if client is None else client.encode("utf-8", "surrogatepass")
    return blake2b(raw, digest_size=12).hexdigest()


# The Lua scripts keep one-time places atomic across every worker sharing the Redis. Each token
# is a key `<prefix><id>` (expiring with its token) whose value says what it is: "1" used (also
# what the store wrote before it had quotas), "r:<tag>" sealed and unopened by client <tag>,
# "u:<tag>" used by client <tag>. Sorted sets scored by deadline (ms, Redis's clock) count the
# places: `<prefix>!live:<tag>` (a client's places, sealed or used), `<prefix>!out:<tag>` (its
# sealed, unopened ones) and `<prefix>!all` (every place, for the whole-store cap). Members whose
# deadline passed are dropped before counting, so a place leaves its quota when its token expires;
# each set also expires when its last member does.
_PRELUDE = """
if redis.replicate_commands then pcall(redis.replicate_commands) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function count(key)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  return redis.call('ZCARD', key)
end
local function add(key, ttl, member)
  redis.call('ZADD', key, now + ttl, member)
  if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
end
"""

# KEYS: token, client's out, client's live, all. ARGV: ttl ms, id, tag, max out, max live,
# max entries. Answers 0 (reserved), 1 (client's unopened share full), 4 (client's live share
# full), 2 (store full), 3 (id taken).
_RESERVE = _PRELUDE + """
local ttl = tonumber(ARGV[1])
if count(KEYS[2]) >= tonumber(ARGV[4]) then return 1 end
if count(KEYS[3]) >= tonumber(ARGV[5]) then return 4 end
if count(KEYS[4]) >= tonumber(ARGV[6]) then return 2 end
if not redis.call('SET', KEYS[1], 'r:' .. ARGV[3], 'NX', 'PX', ttl) then return 3 end
add(KEYS[2], ttl, ARGV[2])
add(KEYS[3], ttl, ARGV[2])
add(KEYS[4], ttl, ARGV[2])
return 0
"""

# KEYS: token, all. ARGV: ttl ms, id, max entries, out-set key prefix. Answers 1 (first use), 0
# (used before) or 2 (never reserved here, and the store is full).
# A token sealed here keeps its place (and its client's) until it expires, no longer unopened; a
# token this store never reserved (sealed before quotas, or by a store without them) is taken
# while the whole store has room: failing closed keeps a replay out.
_CONSUME = _PRELUDE + """
local held = redis.call('GET', KEYS[1])
if held then
  if string.sub(held, 1, 2) ~= 'r:' then return 0 end
  local tag = string.sub(held, 3)
  local left = redis.call('PTTL', KEYS[1])
  if left > 0 then
    redis.call('SET', KEYS[1], 'u:' .. tag, 'PX', left)
  else
    redis.call('SET', KEYS[1], 'u:' .. tag)
  end
  redis.call('ZREM', ARGV[4] .. tag, ARGV[2])
  return 1
end
local ttl = tonumber(ARGV[1])
if count(KEYS[2]) >= tonumber(ARGV[3]) then return 2 end
redis.call('SET', KEYS[1], '1', 'PX', ttl)
add(KEYS[2], ttl, ARGV[2])
return 1
"""


class RedisReplayStore:
    """Shared store on Redis: every worker sharing it refuses a replay, and counts the same quotas.

    Pass a ready `redis.Redis` client or a `url` (needs the `redis` package: `rondo[redis]`).
    The quotas are the memory store's, counted in Redis by one Lua script per call (atomic across
    the fleet, on Redis's clock): a client (the seal's principal, or an anonymous HTTP client's
    address) holds at most `max_live_per_principal` places, sealed or used, of which
    `max_per_principal` sealed and not yet opened; `max_entries` bounds the whole store, a last
    resort. A place leaves every count when its token expires. A store made from `url` waits at
    most `timeout` seconds for Redis (connecting, then each call); a given `client` keeps its own
    settings. Calls are synchronous (one round trip). A Redis failure propagates as an error of
    the server, never as "invalid state", so an outage is visible. Standalone Redis (or
    Sentinel), not Redis Cluster: a script touches keys of one client and the whole store.
    """

    def __init__(
        self,
        client: Any = None,
        *,
        url: str | None = None,
        prefix: str = "rondo:state:used:",
        max_entries: int = 500_000,
        max_per_principal: int = 10_000,
        max_live_per_principal: int = 20_000,
        timeout: float = 1.0,
    ) -> None:
        if (client is None) == (url is None):
            raise ValueError("pass exactly one of client= or url=")
        if not isinstance(prefix, str):
            raise TypeError("prefix must be a str")
        for name, value in (("max_entries", max_entries), ("max_per_principal", max_per_principal),
                            ("max_live_per_principal", max_live_per_principal)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int")
            if value < 1:
                raise ValueError(f"{name} must be at least 1")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            raise TypeError("timeout must be a number of seconds")
        if not 0 < timeout < math.inf:
            raise ValueError("timeout must be positive and finite")
        if url is not None:
            if not isinstance(url, str):
                raise TypeError("url must be a str")
            try:
                import redis
            except ImportError:
                raise ImportError(
                    "RedisReplayStore(url=...) needs the redis package: pip install 'rondo-mcp[redis]'"
                ) from None
            client = redis.Redis.from_url(url, socket_timeout=timeout,
                                          socket_connect_timeout=timeout)
        elif not callable(getattr(client, "register_script", None)):
            raise TypeError("client must be a redis client (with a register_script() method)")
        self._client = client
        self._prefix = prefix
        self.max_entries = max_entries
        self.max_per_principal = max_per_principal
        self.max_live_per_principal = max_live_per_principal
        self.timeout = timeout
        self._reserve = client.register_script(_RESERVE)
        self._consume = client.register_script(_CONSUME)
        self._refused: dict[str | None, int] = {}  # client -> whose limit its last seal reached

    def reserve(self, token_id: str, ttl: float, principal: str | None = None) -> bool:
        """Take a place for a token about to be sealed; False when this client's share (or, as a
        last resort, the whole store) is full."""
        tag = _client_tag(principal)
        p = self._prefix
        answer = int(self._reserve(
            keys=[p + token_id, f"{p}!out:{tag}", f"{p}!live:{tag}", f"{p}!all"],
            args=[max(1, math.ceil(ttl * 1000)), token_id, tag, self.max_per_principal,
                  self.max_live_per_principal, self.max_entries]))
        if answer == 0:
            return True
        if answer == 3:  # 128 random bits met an id in use: refuse this seal, never reuse the id
            log.warning("rondo.state: one-time id already in the Redis store; refusing the seal")
        else:
            log.warning("rondo.state: Redis one-time store full %s: refusing a new one-time seal",
                        "for one client" if answer in (1, 4) else "on this server")
        if len(self._refused) >= 1024:  # refusal() normally collects it at once
            self._refused.clear()
        self._refused[principal] = answer
        return False

    def refusal(self, principal: str | None = None) -> StoreFull:
        """The error for a seal `reserve` refused: whose limit it reached, and which limit."""
        answer = self._refused.pop(principal, 4)
        if answer == 2:
            return StoreFull("server", self.max_entries, "max_entries")
        if answer == 1:
            return StoreFull("client", self.max_per_principal, "max_per_principal")
        return StoreFull("client", self.max_live_per_principal, "max_live_per_principal")

    def consume(self, token_id: str, ttl: float) -> bool:
        p = self._prefix
        answer = int(self._consume(keys=[p + token_id, f"{p}!all"],
                                   args=[max(1, math.ceil(ttl * 1000)), token_id,
                                         self.max_entries, f"{p}!out:"]))
        if answer == 2:
            log.warning("rondo.state: Redis one-time store is full (%d live entries); refusing "
                        "one-time tokens it never reserved until entries expire", self.max_entries)
        return answer == 1
