"""`RedisTaskStore`: tasks in Redis, so every replica of a fleet sees the same tasks.

One key per task (`<prefix><id>`, the record's JSON), expiring with the task's TTL. `modify`
is optimistic: WATCH the key, read, change, write in MULTI/EXEC, retry if another replica wrote
in between, so a `tasks/update` on one replica and the worker's lease renewal on another never
lose each other's writes. `wait` polls (a task changes at human or job pace; the poll interval
bounds how late a worker notices an answer or a cancel).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import Any

from ..wire.errors import internal_error
from .record import TaskRecord, decode, encode
from .store import Change

_RETRIES = 50


class RedisTaskStore:
    """`url` (e.g. `redis://127.0.0.1:6379/0`) or a ready `redis.asyncio.Redis` as `client`.
    `poll` is the `wait` interval in seconds; `grace` seconds are kept past a task's TTL before
    Redis drops it (the spec forbids early expiry, not late)."""

    def __init__(
        self,
        url: str | None = None,
        *,
        client: Any = None,
        prefix: str = "rondo:task:",
        poll: float = 0.1,
        grace: float = 5.0,
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
        self._url = url
        self._client = client
        self._factory = aioredis.from_url
        self._watch_error = WatchError
        self.prefix = prefix
        self.poll = poll
        self.grace = grace
        self._clients: dict[int, Any] = {}

    def _redis(self) -> Any:
        if self._client is not None:
            return self._client
        # One connection pool per event loop: a pool must not be shared across loops.
        loop = asyncio.get_running_loop()
        client = self._clients.get(id(loop))
        if client is None:
            assert self._url is not None
            client = self._clients[id(loop)] = self._factory(self._url)
        return client

    def _key(self, task_id: str) -> str:
        return self.prefix + task_id

    def _expiry_ms(self, record: TaskRecord) -> int | None:
        expires = record.expires_at()
        return None if expires is None else int((expires + self.grace) * 1000)

    async def create(self, record: TaskRecord) -> None:
        r = self._redis()
        written = await r.set(self._key(record.id), encode(record), nx=True,
                              pxat=self._expiry_ms(record))
        if not written:
            raise internal_error("task id collision")  # 192 random bits: a broken RNG

    async def get(self, task_id: str) -> TaskRecord | None:
        raw = await self._redis().get(self._key(task_id))
        if raw is None:
            return None
        record = decode(raw)
        expires = record.expires_at()
        if expires is not None and expires <= time.time():
            return None
        return record

    async def modify(self, task_id: str, change: Change) -> TaskRecord | None:
        r = self._redis()
        key = self._key(task_id)
        for _ in range(_RETRIES):
            async with r.pipeline(transaction=True) as pipe:
                try:
                    await pipe.watch(key)
                    raw = await pipe.get(key)
                    if raw is None:
                        return None
                    record = decode(raw)
                    if not change(record):
                        await pipe.unwatch()
                        return record
                    pipe.multi()
                    pipe.set(key, encode(record), keepttl=True)
                    await pipe.execute()
                    return record
                except self._watch_error:
                    continue
        raise internal_error("the task changed too often to update; try again")

    async def wait(self, task_ids: Iterable[str], timeout: float) -> None:
        await asyncio.sleep(min(timeout, self.poll))

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()
