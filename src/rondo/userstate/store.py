"""The store interface per-user state sits on, and the in-process store.

A store maps full keys (already scoped to a principal by `UserStateView`) to encoded values,
each with an optional expiry. Every operation exists twice: `async` for coroutine handlers and
`*_sync` for plain `def` handlers. `cas` and `take` are atomic: two callers racing on one key
see exactly one winner, on one process (this store) or across a fleet (`RedisStore`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from .errors import StateTooLarge


@runtime_checkable
class UserStateStore(Protocol):
    """What a per-user state store implements. `ttl` is seconds (None: no expiry). In `cas`,
    `expected=None` means "the key is absent" and `new=None` means "delete it"."""

    shared: bool  # True if every worker of a fleet sees the same data

    async def get(self, key: str) -> bytes | None: ...
    async def set(self, key: str, value: bytes, ttl: float | None) -> None: ...
    async def delete(self, key: str) -> bool: ...
    async def cas(self, key: str, expected: bytes | None, new: bytes | None,
                  ttl: float | None) -> bool: ...
    async def take(self, key: str) -> bytes | None: ...
    def get_sync(self, key: str) -> bytes | None: ...
    def set_sync(self, key: str, value: bytes, ttl: float | None) -> None: ...
    def delete_sync(self, key: str) -> bool: ...
    def cas_sync(self, key: str, expected: bytes | None, new: bytes | None,
                 ttl: float | None) -> bool: ...
    def take_sync(self, key: str) -> bytes | None: ...


class SyncBacked:
    """The async half of a store whose operations are quick and local (memory, a local file):
    each coroutine runs its sync twin in place."""

    def get_sync(self, key: str) -> bytes | None:
        raise NotImplementedError

    def set_sync(self, key: str, value: bytes, ttl: float | None) -> None:
        raise NotImplementedError

    def delete_sync(self, key: str) -> bool:
        raise NotImplementedError

    def cas_sync(self, key: str, expected: bytes | None, new: bytes | None,
                 ttl: float | None) -> bool:
        raise NotImplementedError

    def take_sync(self, key: str) -> bytes | None:
        raise NotImplementedError

    async def get(self, key: str) -> bytes | None:
        return self.get_sync(key)

    async def set(self, key: str, value: bytes, ttl: float | None) -> None:
        self.set_sync(key, value, ttl)

    async def delete(self, key: str) -> bool:
        return self.delete_sync(key)

    async def cas(self, key: str, expected: bytes | None, new: bytes | None,
                  ttl: float | None) -> bool:
        return self.cas_sync(key, expected, new, ttl)

    async def take(self, key: str) -> bytes | None:
        return self.take_sync(key)


class MemoryStore(SyncBacked):
    """Per-user state in this process: gone on restart, invisible to other workers (the fleet
    start-up guard refuses it with more than one). `max_entries` bounds its memory: a write of
    a new key into a full store raises `StateTooLarge` after expired entries are dropped."""

    shared = False

    def __init__(self, *, max_entries: int = 100_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not isinstance(max_entries, int) or max_entries < 1:
            raise ValueError("max_entries must be a positive integer")
        self.max_entries = max_entries
        self._clock = clock
        self._data: dict[str, tuple[bytes, float | None]] = {}
        self._lock = threading.Lock()

    def _live(self, key: str) -> bytes | None:
        entry = self._data.get(key)
        if entry is None:
            return None
        value, expires = entry
        if expires is not None and expires <= self._clock():
            del self._data[key]
            return None
        return value

    def _put(self, key: str, value: bytes, ttl: float | None) -> None:
        if key not in self._data and len(self._data) >= self.max_entries:
            now = self._clock()
            for k in [k for k, (_, e) in self._data.items() if e is not None and e <= now]:
                del self._data[k]
            if len(self._data) >= self.max_entries:
                raise StateTooLarge(f"user state is full ({self.max_entries} entries)")
        self._data[key] = (value, None if ttl is None else self._clock() + ttl)

    def get_sync(self, key: str) -> bytes | None:
        with self._lock:
            return self._live(key)

    def set_sync(self, key: str, value: bytes, ttl: float | None) -> None:
        with self._lock:
            self._put(key, value, ttl)

    def delete_sync(self, key: str) -> bool:
        with self._lock:
            found = self._live(key) is not None
            self._data.pop(key, None)
            return found

    def cas_sync(self, key: str, expected: bytes | None, new: bytes | None,
                 ttl: float | None) -> bool:
        with self._lock:
            if self._live(key) != expected:
                return False
            if new is None:
                self._data.pop(key, None)
            else:
                self._put(key, new, ttl)
            return True

    def take_sync(self, key: str) -> bytes | None:
        with self._lock:
            value = self._live(key)
            self._data.pop(key, None)
            return value

    def __len__(self) -> int:
        return len(self._data)
