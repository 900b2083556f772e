"""Webhook subscriptions: keyed by (principal, url, name, arguments), with a TTL, in memory or
in Redis (so every worker of a fleet delivers to the same set)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from typing import Any, Protocol


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def subscription_id(principal: str, url: str, name: str, arguments: Any) -> str:
    key = canonical([principal, url, name, arguments])
    return "sub_" + hashlib.sha256(key.encode()).hexdigest()[:24]


class SubscriptionStore(Protocol):
    shared: bool

    async def put(self, record: dict[str, Any]) -> None: ...
    async def get(self, sub_id: str) -> dict[str, Any] | None: ...
    async def delete(self, sub_id: str) -> bool: ...
    async def for_event(self, name: str) -> list[dict[str, Any]]: ...


def _live(record: dict[str, Any] | None, now: float) -> dict[str, Any] | None:
    if record is None:
        return None
    expires = record.get("expires")
    return None if expires is not None and expires <= now else record


class MemorySubscriptions:
    shared = False

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self._records: dict[str, dict[str, Any]] = {}

    async def put(self, record: dict[str, Any]) -> None:
        now = time.time()
        for key in [k for k, r in self._records.items() if _live(r, now) is None]:
            del self._records[key]
        if record["id"] not in self._records and len(self._records) >= self.limit:
            raise OverflowError("subscriptions")
        self._records[record["id"]] = dict(record)

    async def get(self, sub_id: str) -> dict[str, Any] | None:
        return _live(self._records.get(sub_id), time.time())

    async def delete(self, sub_id: str) -> bool:
        return self._records.pop(sub_id, None) is not None

    async def for_event(self, name: str) -> list[dict[str, Any]]:
        now = time.time()
        return [r for r in self._records.values() if r["name"] == name and _live(r, now)]


class RedisSubscriptions:
    """One hash per event type (`<prefix><name>`: id -> record JSON) and a name index."""

    shared = True

    def __init__(self, url: str, *, prefix: str = "rondo:event-subs:", limit: int = 10_000) -> None:
        import redis.asyncio as aioredis

        self.url = url
        self.prefix = prefix
        self.limit = limit
        self._factory = aioredis.from_url
        self._clients: dict[int, Any] = {}

    def _r(self) -> Any:
        loop = asyncio.get_running_loop()
        client = self._clients.get(id(loop))
        if client is None:
            client = self._clients[id(loop)] = self._factory(self.url)
        return client

    async def put(self, record: dict[str, Any]) -> None:
        r = self._r()
        key = self.prefix + record["name"]
        if not await r.hexists(key, record["id"]) and await r.hlen(key) >= self.limit:
            raise OverflowError("subscriptions")
        await r.hset(key, record["id"], canonical(record))
        await r.hset(self.prefix + "index", record["id"], record["name"])

    async def get(self, sub_id: str) -> dict[str, Any] | None:
        r = self._r()
        name = await r.hget(self.prefix + "index", sub_id)
        if name is None:
            return None
        raw = await r.hget(self.prefix + name.decode(), sub_id)
        return _live(json.loads(raw), time.time()) if raw else None

    async def delete(self, sub_id: str) -> bool:
        r = self._r()
        name = await r.hget(self.prefix + "index", sub_id)
        if name is None:
            return False
        await r.hdel(self.prefix + "index", sub_id)
        return bool(await r.hdel(self.prefix + name.decode(), sub_id))

    async def for_event(self, name: str) -> list[dict[str, Any]]:
        now = time.time()
        found = []
        for raw in (await self._r().hgetall(self.prefix + name)).values():
            record = _live(json.loads(raw), now)
            if record is not None:
                found.append(record)
        return found
