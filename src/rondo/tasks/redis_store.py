"""`RedisTaskStore`: tasks in Redis, so every replica of a fleet sees the same tasks.

One key per task (`<prefix><id>`, the record's JSON), expiring with the task's TTL, and beside
it the lease as the last renewal wrote it (`<prefix><id>:lease`, so renewing a lease is one
`SET`, not a read-change-write of the record). `modify` is optimistic: WATCH both keys, read,
change, write in MULTI/EXEC, retry if another replica wrote in between, so a `tasks/update` on
one replica and the worker's writes on another never lose each other's changes. Every write
publishes the task id on `<prefix>changes` in the same transaction; `on_change` and `wait`
listen there (`redis_feed.py`), so a keeper wakes when its own task changes and never polls.
Connections come from a bounded pool (`max_connections`): past it a command waits for a free
connection (up to `pool_timeout` seconds) instead of failing. Each client's unfinished tasks are
a sorted set (`<prefix>client:<digest>`, scored by expiry): `create` (one Lua script, so
concurrent creates never retry) refuses one more past `max_per_client`, and the write that
finishes a task takes it out.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable
from typing import Any

from ..wire.errors import internal_error
from .record import TaskRecord, decode, encode, too_many_for_client
from .redis_feed import Feed
from .store import Change, Wake

_RETRIES = 50

# create, atomically: drop the client's expired tasks from its set, refuse past the quota (-1),
# write the record if its id is new (else 0), count it for its client (the set expires with
# its last task), tell the change feed (1). One script, so concurrent creates never retry.
_CREATE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return -1 end
local written
if ARGV[4] == '' then
  written = redis.call('SET', KEYS[2], ARGV[3], 'NX')
else
  written = redis.call('SET', KEYS[2], ARGV[3], 'NX', 'PXAT', ARGV[4])
end
if not written then return 0 end
redis.call('ZADD', KEYS[1], ARGV[5], ARGV[6])
local left = redis.call('PTTL', KEYS[1])
if left == -1 or tonumber(ARGV[1]) + left < tonumber(ARGV[5]) then
  redis.call('PEXPIREAT', KEYS[1], ARGV[5])
end
redis.call('PUBLISH', ARGV[7], ARGV[6])
return 1
"""


class RedisTaskStore:
    """`url` (e.g. `redis://127.0.0.1:6379/0`) or a ready `redis.asyncio.Redis` as `client`.
    `grace` seconds are kept past a task's TTL before Redis drops it (the spec forbids early
    expiry, not late). With a `url`, each event loop gets a pool of at most `max_connections`
    connections; a command finding none free waits up to `pool_timeout` seconds. `poll` is
    accepted for compatibility and unused: changes arrive on the feed. One client (the principal,
    or an anonymous request's network peer) has at most `max_per_client` unfinished tasks
    (-32000 naming the limit past it); Redis's memory bounds the rest."""

    def __init__(
        self,
        url: str | None = None,
        *,
        client: Any = None,
        prefix: str = "rondo:task:",
        poll: float = 0.1,
        grace: float = 5.0,
        max_connections: int = 64,
        pool_timeout: float = 10.0,
        max_per_client: int = 1_000,
    ) -> None:
        try:
            import redis.asyncio as aioredis
            from redis.exceptions import WatchError
        except ImportError:
            raise ImportError("RedisTaskStore needs the redis package: pip install 'rondo-mcp[redis]'") from None
        if (url is None) == (client is None):
            raise ValueError("give RedisTaskStore a url or a client, not both")
        if not poll > 0 or grace < 0:
            raise ValueError("poll must be positive and grace non-negative")
        if isinstance(max_connections, bool) or not isinstance(max_connections, int) or max_connections < 2:
            raise ValueError("max_connections must be an integer of at least 2 (the feed holds one)")
        if not pool_timeout > 0:
            raise ValueError("pool_timeout must be positive")
        if isinstance(max_per_client, bool) or not isinstance(max_per_client, int) or max_per_client < 1:
            raise ValueError("max_per_client must be a positive integer")
        self.max_per_client = max_per_client
        self._url = url
        self._client = client
        self._aioredis = aioredis
        self._watch_error = WatchError
        self.prefix = prefix
        self.channel = prefix + "changes"
        self.poll = poll
        self.grace = grace
        self.max_connections = max_connections
        self.pool_timeout = pool_timeout
        self._clients: dict[int, Any] = {}
        self._feeds: dict[int, Feed] = {}
        self._scripts: dict[int, Any] = {}

    def _redis(self) -> Any:
        if self._client is not None:
            return self._client
        # One connection pool per event loop: a pool must not be shared across loops.
        loop = asyncio.get_running_loop()
        client = self._clients.get(id(loop))
        if client is None:
            assert self._url is not None
            pool = self._aioredis.BlockingConnectionPool.from_url(
                self._url, max_connections=self.max_connections, timeout=self.pool_timeout)
            client = self._clients[id(loop)] = self._aioredis.Redis(connection_pool=pool)
        return client

    def _feed(self) -> Feed:
        loop = asyncio.get_running_loop()
        feed = self._feeds.get(id(loop))
        if feed is None or feed.loop is not loop:
            feed = self._feeds[id(loop)] = Feed(self._redis(), self.channel, loop)
        return feed

    def _key(self, task_id: str) -> str:
        return self.prefix + task_id

    def _expiry_ms(self, record: TaskRecord) -> int | None:
        expires = record.expires_at()
        return None if expires is None else int((expires + self.grace) * 1000)

    def _lease_key(self, task_id: str) -> str:
        return self.prefix + task_id + ":lease"

    def _client_key(self, client: str | None) -> str:
        return self.prefix + "client:" + (client or "anonymous")

    async def create(self, record: TaskRecord) -> None:
        r = self._redis()
        now_ms = int(time.time() * 1000)
        expiry = self._expiry_ms(record)
        score = expiry if expiry is not None else now_ms + 10 * 365 * 86_400_000
        script = self._scripts.get(id(r))
        if script is None:
            script = self._scripts[id(r)] = r.register_script(_CREATE)
        done = await script(keys=[self._client_key(record.client), self._key(record.id)],
                            args=[now_ms, self.max_per_client, encode(record),
                                  "" if expiry is None else expiry, score, record.id, self.channel])
        if done == -1:
            raise too_many_for_client(self.max_per_client)
        if done != 1:
            raise internal_error("task id collision")  # 192 random bits: a broken RNG

    async def get(self, task_id: str) -> TaskRecord | None:
        raw, lease = await self._redis().mget(self._key(task_id), self._lease_key(task_id))
        record = _merged(raw, lease)
        if record is None:
            return None
        expires = record.expires_at()
        if expires is not None and expires <= time.time():
            return None
        return record

    async def modify(self, task_id: str, change: Change) -> TaskRecord | None:
        r = self._redis()
        key, lease_key = self._key(task_id), self._lease_key(task_id)
        for _ in range(_RETRIES):
            async with r.pipeline(transaction=True) as pipe:
                try:
                    await pipe.watch(key, lease_key)
                    raw, lease = await pipe.mget(key, lease_key)
                    record = _merged(raw, lease)
                    if record is None:
                        return None
                    was_terminal = record.terminal
                    if not change(record):
                        await pipe.unwatch()
                        return record
                    pipe.multi()
                    pipe.set(key, encode(record), keepttl=True)  # the record holds the lease again
                    pipe.delete(lease_key)
                    if record.terminal and not was_terminal:  # no longer counts for its client
                        pipe.zrem(self._client_key(record.client), task_id)
                    pipe.publish(self.channel, task_id)
                    await pipe.execute()
                    return record
                except self._watch_error:
                    continue
        raise internal_error("the task changed too often to update; try again")

    async def renew_many(self, task_ids: Iterable[str], until: float) -> list[str]:
        """One pipeline: each live task's lease key is set to `until` (kept `grace` past it).
        Returns the ids whose task is gone. Wakes nobody: no change is published."""
        ids = list(task_ids)
        if not ids:
            return []
        async with self._redis().pipeline(transaction=False) as pipe:
            for task_id in ids:
                pipe.exists(self._key(task_id))
                pipe.set(self._lease_key(task_id), repr(until), pxat=int((until + self.grace) * 1000))
            replies = await pipe.execute()
        return [task_id for task_id, found in zip(ids, replies[::2], strict=True) if not found]

    async def beat(self, worker: str, until: float) -> None:
        """The worker's heartbeat (`<prefix>worker:<id>`), kept `grace` past `until`."""
        await self._redis().set(self.prefix + "worker:" + worker, repr(until),
                                pxat=int((until + self.grace) * 1000))

    async def heartbeat(self, worker: str) -> float | None:
        raw = await self._redis().get(self.prefix + "worker:" + worker)
        try:
            return None if raw is None else float(raw)
        except ValueError:
            return None

    def on_change(self, task_id: str, wake: Wake) -> Callable[[], None]:
        return self._feed().on_change(task_id, wake)

    async def wait(self, task_ids: Iterable[str], timeout: float) -> None:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not fut.done():
                fut.set_result(None)

        stops = [self.on_change(task_id, wake) for task_id in task_ids]
        try:
            await asyncio.wait_for(asyncio.shield(fut), timeout)
        except TimeoutError:
            pass
        finally:
            for stop in stops:
                stop()

    async def aclose(self) -> None:
        for feed in self._feeds.values():
            await feed.aclose()
        self._feeds.clear()
        for client in self._clients.values():  # made here, each with the pool made for it
            with contextlib.suppress(Exception):
                await client.aclose(close_connection_pool=True)
        self._clients.clear()
        self._scripts.clear()


def _merged(raw: bytes | None, lease: bytes | None) -> TaskRecord | None:
    """The record with the lease its renewals moved on (a renewal writes only the lease key)."""
    if raw is None:
        return None
    record = decode(raw)
    if lease is not None and not record.terminal and record.lease is not None:
        with contextlib.suppress(ValueError):
            record.lease = max(record.lease, float(lease))
    return record
