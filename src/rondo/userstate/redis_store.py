"""`RedisStore`: per-user state in Redis, shared by every worker of a fleet.

`get`/`set`/`delete` are single commands; `take` is `GETDEL` and `cas` one Lua script, so both
are atomic across workers. A Redis that does not answer raises `StoreUnavailable` (nothing was
changed, or, for a `set` whose reply was lost, the caller is told it may not have been).
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from .errors import StoreUnavailable

# KEYS[1]; ARGV: has-expected (0/1), expected, delete (0/1), new, ttl ms ('' for none).
_CAS = """
local v = redis.call('GET', KEYS[1])
if ARGV[1] == '0' then
  if v then return 0 end
elseif v ~= ARGV[2] then
  return 0
end
if ARGV[3] == '1' then
  redis.call('DEL', KEYS[1])
elseif ARGV[5] == '' then
  redis.call('SET', KEYS[1], ARGV[4])
else
  redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[5])
end
return 1
"""


def _down(exc: BaseException) -> StoreUnavailable:
    return StoreUnavailable(f"user state is unavailable (Redis did not answer: {type(exc).__name__}); "
                            "the change may not have been made")


def _ms(ttl: float | None) -> int | None:
    return None if ttl is None else max(1, int(ttl * 1000))


def _cas_args(expected: bytes | None, new: bytes | None, ttl: float | None) -> list[Any]:
    ms = _ms(ttl)
    return ["0" if expected is None else "1", expected or b"", "1" if new is None else "0",
            new or b"", "" if ms is None else str(ms)]


class RedisStore:
    """`url` (`redis://host:6379/0`; `rondo run --redis` fills it in for a memory store) and
    `prefix` for every key. `timeout` bounds each command in seconds."""

    shared = True

    def __init__(self, url: str, *, prefix: str = "rondo:user:", timeout: float = 2.0) -> None:
        try:
            import redis
            import redis.asyncio as aioredis
        except ImportError:
            raise ImportError("RedisStore needs the redis package: pip install 'rondo-mcp[redis]'") from None
        self.url = url
        self.prefix = prefix
        self.timeout = timeout
        self._errors = (redis.RedisError, OSError)
        self._sync = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
        self._factory = aioredis.from_url
        self._clients: dict[int, Any] = {}

    def _redis(self) -> Any:
        # One pool per event loop: a pool must not be shared across loops.
        loop = asyncio.get_running_loop()
        client = self._clients.get(id(loop))
        if client is None:
            client = self._clients[id(loop)] = self._factory(
                self.url, socket_timeout=self.timeout, socket_connect_timeout=self.timeout)
        return client

    async def get(self, key: str) -> bytes | None:
        try:
            value = await self._redis().get(self.prefix + key)
        except self._errors as exc:
            raise _down(exc) from None
        return cast("bytes | None", value)

    async def set(self, key: str, value: bytes, ttl: float | None) -> None:
        try:
            await self._redis().set(self.prefix + key, value, px=_ms(ttl))
        except self._errors as exc:
            raise _down(exc) from None

    async def delete(self, key: str) -> bool:
        try:
            return bool(await self._redis().delete(self.prefix + key))
        except self._errors as exc:
            raise _down(exc) from None

    async def cas(self, key: str, expected: bytes | None, new: bytes | None,
                  ttl: float | None) -> bool:
        try:
            done = await self._redis().eval(_CAS, 1, self.prefix + key,
                                            *_cas_args(expected, new, ttl))
        except self._errors as exc:
            raise _down(exc) from None
        return bool(done)

    async def take(self, key: str) -> bytes | None:
        try:
            value = await self._redis().getdel(self.prefix + key)
        except self._errors as exc:
            raise _down(exc) from None
        return cast("bytes | None", value)

    def get_sync(self, key: str) -> bytes | None:
        try:
            value = self._sync.get(self.prefix + key)
        except self._errors as exc:
            raise _down(exc) from None
        return cast("bytes | None", value)

    def set_sync(self, key: str, value: bytes, ttl: float | None) -> None:
        try:
            self._sync.set(self.prefix + key, value, px=_ms(ttl))
        except self._errors as exc:
            raise _down(exc) from None

    def delete_sync(self, key: str) -> bool:
        try:
            return bool(self._sync.delete(self.prefix + key))
        except self._errors as exc:
            raise _down(exc) from None

    def cas_sync(self, key: str, expected: bytes | None, new: bytes | None,
                 ttl: float | None) -> bool:
        try:
            done = self._sync.eval(_CAS, 1, self.prefix + key, *_cas_args(expected, new, ttl))
        except self._errors as exc:
            raise _down(exc) from None
        return bool(done)

    def take_sync(self, key: str) -> bytes | None:
        try:
            value = self._sync.getdel(self.prefix + key)
        except self._errors as exc:
            raise _down(exc) from None
        return cast("bytes | None", value)
