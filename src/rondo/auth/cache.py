"""Verified tokens, remembered by their SHA-256 digest (never the token) until they expire."""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable

from .principal import Principal

# A fresh hasher copied per digest: cheaper than `hashlib.sha256(...)`, which looks the
# algorithm up again on every call.
_SHA256 = hashlib.sha256()


class TokenCache:
    """A bounded LRU: digest -> (principal, deadline). `size` 0 turns it off."""

    def __init__(self, size: int = 10_000, clock: Callable[[], float] = time.time) -> None:
        if not isinstance(size, int) or size < 0:
            raise ValueError("token_cache_size must be a non-negative integer")
        self.size = size
        self._clock = clock
        self._entries: OrderedDict[bytes, tuple[Principal, float]] = OrderedDict()

    @staticmethod
    def digest(token: str) -> bytes:
        return hashlib.sha256(token.encode("ascii")).digest()

    @staticmethod
    def digest_bytes(raw: bytes) -> bytes:
        hasher = _SHA256.copy()
        hasher.update(raw)
        return hasher.digest()

    def get(self, digest: bytes) -> Principal | None:
        entry = self._entries.get(digest)
        if entry is None:
            return None
        principal, deadline = entry
        if self._clock() >= deadline:
            del self._entries[digest]
            return None
        self._entries.move_to_end(digest)
        return principal

    def put(self, digest: bytes, principal: Principal, ttl: float) -> None:
        if self.size == 0 or ttl <= 0:
            return
        now = self._clock()
        deadline = now + ttl
        if principal.expires_at is not None:
            deadline = min(deadline, principal.expires_at)
        if deadline <= now:
            return
        entries = self._entries
        entries[digest] = (principal, deadline)
        entries.move_to_end(digest)
        while len(entries) > self.size:
            entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
