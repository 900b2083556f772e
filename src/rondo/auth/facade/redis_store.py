"""The facade's store on Redis (`rondo[redis]`), for a fleet: the same Redis the fleet uses
(`rondo run --redis URL`, `RONDO_REDIS_URL`). `add` is `SET NX GET`, `take` is `GETDEL`, a
counter is `INCR` then `PEXPIRE NX` (Redis 7). Keys are prefixed and never hold a secret."""

from __future__ import annotations

from typing import Any


class RedisStore:
    shared = True

    def __init__(self, url: str | None = None, *, client: Any = None, prefix: str = "rondo:facade:",
                 timeout: float = 2.0) -> None:
        if client is None:
            if not isinstance(url, str) or not url.startswith(("redis://", "rediss://", "unix://")):
                raise ValueError("RedisStore needs a redis:// URL (or a redis.asyncio client)")
            try:
                import redis.asyncio  # noqa: F401
            except ImportError:
                raise ImportError("RedisStore needs the redis package: pip install "
                                  "'rondo-mcp[redis]'") from None
        self._given = client
        self._url = url
        self._timeout = timeout
        self._client: Any = client
        self._loop: Any = None
        self.prefix = prefix

    @property
    def _r(self) -> Any:
        """The client, made in the running loop (an asyncio client belongs to one loop; an app
        imported before its server's loop starts would otherwise hold a client of no loop)."""
        if self._given is not None:
            return self._given
        import asyncio

        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            import redis.asyncio

            self._client = redis.asyncio.Redis.from_url(str(self._url), socket_timeout=self._timeout,
                                                        socket_connect_timeout=self._timeout)
            self._loop = loop
        return self._client

    async def get(self, key: str) -> bytes | None:
        value = await self._r.get(self.prefix + key)
        return None if value is None else bytes(value)

    async def get_many(self, keys: list[str]) -> list[bytes | None]:
        """One MGET: one round trip, and one moment, for all of them."""
        values = await self._r.mget([self.prefix + key for key in keys])
        return [None if value is None else bytes(value) for value in values]

    async def put(self, key: str, value: bytes, ttl: float) -> None:
        await self._r.set(self.prefix + key, value, px=max(1, int(ttl * 1000)))

    async def add(self, key: str, value: bytes, ttl: float) -> bytes | None:
        there = await self._r.set(self.prefix + key, value, px=max(1, int(ttl * 1000)), nx=True,
                                  get=True)
        return None if there is None else bytes(there)

    async def take(self, key: str) -> bytes | None:
        value = await self._r.getdel(self.prefix + key)
        return None if value is None else bytes(value)

    async def delete(self, key: str) -> None:
        await self._r.delete(self.prefix + key)

    async def count(self, key: str, window: float) -> int:
        name = self.prefix + key
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.incr(name)
            pipe.pexpire(name, max(1, int(window * 1000)), nx=True)
            n, _ = await pipe.execute()
        return int(n)

    def __repr__(self) -> str:
        return f"RedisStore(prefix={self.prefix!r})"
