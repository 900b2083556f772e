"""`UserStateView`: what a handler gets as `ctx.user_state`, a key-value view scoped to the
caller. Values are anything JSON can carry; they are stored encoded (sorted keys, so equal
values have equal bytes and `cas` compares values, not spellings)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from .errors import StateTooLarge

if TYPE_CHECKING:
    from .extension import UserState


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()  # in `cas`: "the key does not exist" (expected) / "delete it" (new)

_encode = msgspec.json.Encoder(order="sorted").encode
_decode = msgspec.json.decode


class _Scoped:
    __slots__ = ("_ext", "_store", "_scope")

    def __init__(self, ext: UserState, scope: str) -> None:
        self._ext = ext
        self._store = ext.store
        self._scope = scope

    def _key(self, key: str) -> str:
        if not isinstance(key, str) or not key:
            raise TypeError("a user state key is a non-empty str")
        if len(key.encode()) > self._ext.max_key_bytes:
            raise StateTooLarge(f"user state key is over {self._ext.max_key_bytes} bytes")
        return self._scope + key

    def _value(self, value: Any) -> bytes:
        data = _encode(value)
        if len(data) > self._ext.max_value_bytes:
            raise StateTooLarge(f"user state value is {len(data)} bytes encoded, over the "
                                f"{self._ext.max_value_bytes}-byte bound")
        return data

    def _ttl(self, ttl: float | None) -> float | None:
        ttl = self._ext.default_ttl if ttl is None else ttl
        if ttl is not None and not ttl > 0:
            raise ValueError("ttl must be positive seconds (or None)")
        return ttl

    def _cas_parts(self, expected: Any, new: Any) -> tuple[bytes | None, bytes | None]:
        return (None if expected is ABSENT else _encode(expected),
                None if new is ABSENT else self._value(new))


class UserStateView(_Scoped):
    """Async operations (`await ctx.user_state.get("cart")`); `.sync` has the same for plain
    `def` handlers.

    - `get(key, default=None)`; `set(key, value, ttl=None)` (ttl seconds; None: the
      extension's `default_ttl`); `delete(key) -> bool` (True if it existed).
    - `cas(key, expected, new, ttl=None) -> bool`: write `new` only if the stored value equals
      `expected` (`ABSENT`: only if there is none; `new=ABSENT` deletes). Atomic.
    - `take(key, default=None)`: return the value and delete it, atomically: of any number of
      concurrent takes, exactly one gets it.
    """

    __slots__ = ()

    @property
    def sync(self) -> SyncUserStateView:
        """The same operations, blocking."""
        return SyncUserStateView(self._ext, self._scope)

    async def get(self, key: str, default: Any = None) -> Any:
        data = await self._store.get(self._key(key))
        return default if data is None else _decode(data)

    async def set(self, key: str, value: Any, ttl: float | None = None) -> None:
        full, data = self._key(key), self._value(value)
        await self._store.set(full, data, self._ttl(ttl))

    async def delete(self, key: str) -> bool:
        return await self._store.delete(self._key(key))

    async def cas(self, key: str, expected: Any, new: Any, ttl: float | None = None) -> bool:
        full = self._key(key)
        old, data = self._cas_parts(expected, new)
        return await self._store.cas(full, old, data, self._ttl(ttl))

    async def take(self, key: str, default: Any = None) -> Any:
        data = await self._store.take(self._key(key))
        return default if data is None else _decode(data)


class SyncUserStateView(_Scoped):
    """The same operations as `UserStateView`, blocking (for plain `def` handlers)."""

    __slots__ = ()

    def get(self, key: str, default: Any = None) -> Any:
        data = self._store.get_sync(self._key(key))
        return default if data is None else _decode(data)

    def set(self, key: str, value: Any, ttl: float | None = None) -> None:
        full, data = self._key(key), self._value(value)
        self._store.set_sync(full, data, self._ttl(ttl))

    def delete(self, key: str) -> bool:
        return self._store.delete_sync(self._key(key))

    def cas(self, key: str, expected: Any, new: Any, ttl: float | None = None) -> bool:
        full = self._key(key)
        old, data = self._cas_parts(expected, new)
        return self._store.cas_sync(full, old, data, self._ttl(ttl))

    def take(self, key: str, default: Any = None) -> Any:
        data = self._store.take_sync(self._key(key))
        return default if data is None else _decode(data)
