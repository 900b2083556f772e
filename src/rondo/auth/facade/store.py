"""Where the facade keeps registrations, consents, codes, grants and refresh tokens: one small
interface, three backends. `MemoryStore` (one process), `FileStore` (one host, any number of
processes: each key a file, changes under `fcntl` locks), `RedisStore` (a fleet; in
`redis_store.py`, needs `rondo[redis]`).

Values are opaque bytes (the facade encrypts what is secret before it gets here) and keys never
hold a secret (codes and tokens are stored under their SHA-256). Every entry has a lifetime.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

SWEEP_EVERY = 1000  # FileStore writes between sweeps of expired files


class StoreFull(Exception):
    """The store holds as much as it may: the request is refused, nothing is evicted early."""


@runtime_checkable
class Store(Protocol):
    """`shared` says whether other processes see the same data (the multi-worker guard reads it)."""

    shared: bool

    async def get(self, key: str) -> bytes | None: ...

    async def put(self, key: str, value: bytes, ttl: float) -> None: ...

    async def add(self, key: str, value: bytes, ttl: float) -> bytes | None:
        """Set `key` only if absent: None when this call set it, else the value already there
        (atomic: of many concurrent calls exactly one gets None)."""
        ...

    async def take(self, key: str) -> bytes | None:
        """Get and delete in one step: of concurrent calls, at most one gets the value."""
        ...

    async def delete(self, key: str) -> None: ...

    async def count(self, key: str, window: float) -> int:
        """Add one to the counter at `key` (created with lifetime `window`), return it."""
        ...


class MemoryStore:
    """One process. Bounded: at most `max_entries` live entries (then `StoreFull`)."""

    shared = False

    def __init__(self, max_entries: int = 100_000, clock: Callable[[], float] = time.time) -> None:
        self.max_entries = max_entries
        self._clock = clock
        self._data: dict[str, tuple[bytes, float]] = {}
        self._next_sweep = 0.0

    def _live(self, key: str) -> bytes | None:
        entry = self._data.get(key)
        if entry is None:
            return None
        if entry[1] <= self._clock():
            del self._data[key]
            return None
        return entry[0]

    def _room(self) -> None:
        if len(self._data) < self.max_entries:
            return
        now = self._clock()
        if now >= self._next_sweep:  # a full store is swept at most once a second, not per write
            self._next_sweep = now + 1.0
            for key in [k for k, (_, deadline) in self._data.items() if deadline <= now]:
                del self._data[key]
        if len(self._data) >= self.max_entries:
            raise StoreFull("the facade's memory store is full")

    async def get(self, key: str) -> bytes | None:
        return self._live(key)

    async def get_many(self, keys: list[str]) -> list[bytes | None]:
        """Several keys in one read (optional in a store: one round trip for Redis)."""
        return [self._live(key) for key in keys]

    async def put(self, key: str, value: bytes, ttl: float) -> None:
        if key not in self._data:
            self._room()
        self._data[key] = (value, self._clock() + ttl)

    async def add(self, key: str, value: bytes, ttl: float) -> bytes | None:
        there = self._live(key)
        if there is not None:
            return there
        self._room()
        self._data[key] = (value, self._clock() + ttl)
        return None

    async def take(self, key: str) -> bytes | None:
        there = self._live(key)
        if there is not None:
            del self._data[key]
        return there

    async def delete(self, key: str) -> None:
        self._data.pop(key, None)

    async def count(self, key: str, window: float) -> int:
        there = self._live(key)
        n = int(there or b"0") + 1
        if there is None:
            self._room()
            self._data[key] = (str(n).encode(), self._clock() + window)
        else:
            self._data[key] = (str(n).encode(), self._data[key][1])
        return n

    def __len__(self) -> int:
        return len(self._data)


class FileStore:
    """One host, many processes: a directory with one file per key (named by the key's SHA-256),
    `deadline\\n value`; `add`, `take` and `count` hold an exclusive `fcntl` lock on a lock file
    so processes agree. Expired files are removed when read, and by `sweep()` (every
    `SWEEP_EVERY` writes of this process)."""

    shared = True

    def __init__(self, directory: str | os.PathLike[str], clock: Callable[[], float] = time.time) -> None:
        import fcntl  # noqa: F401  (POSIX only: say so at start-up, not at the first request)

        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._clock = clock
        self._lock_path = self.dir / ".lock"
        self._writes = 0

    def _path(self, key: str) -> Path:
        return self.dir / hashlib.sha256(key.encode()).hexdigest()

    def _read(self, path: Path) -> bytes | None:
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        head, _, value = raw.partition(b"\n")
        try:
            deadline = float(head)
        except ValueError:
            return None
        if deadline <= self._clock():
            path.unlink(missing_ok=True)
            return None
        return value

    def _write(self, path: Path, value: bytes, ttl: float) -> None:
        self._writes += 1
        if self._writes % SWEEP_EVERY == 0:
            self.sweep()  # expired files of keys never read again
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(f"{self._clock() + ttl!r}\n".encode() + value)
        os.replace(tmp, path)  # readers see the old file or the new one, never half

    def _locked(self) -> _FileLock:
        return _FileLock(self._lock_path)

    async def get(self, key: str) -> bytes | None:
        return self._read(self._path(key))

    async def get_many(self, keys: list[str]) -> list[bytes | None]:
        return [self._read(self._path(key)) for key in keys]

    async def put(self, key: str, value: bytes, ttl: float) -> None:
        self._write(self._path(key), value, ttl)

    async def add(self, key: str, value: bytes, ttl: float) -> bytes | None:
        path = self._path(key)
        with self._locked():
            there = self._read(path)
            if there is not None:
                return there
            self._write(path, value, ttl)
            return None

    async def take(self, key: str) -> bytes | None:
        path = self._path(key)
        with self._locked():
            there = self._read(path)
            if there is not None:
                path.unlink(missing_ok=True)
            return there

    async def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    async def count(self, key: str, window: float) -> int:
        path = self._path(key)
        with self._locked():
            there = self._read(path)
            n = int(there or b"0") + 1
            if there is None:
                self._write(path, str(n).encode(), window)
            else:
                deadline = float(path.read_bytes().partition(b"\n")[0])
                self._write(path, str(n).encode(), deadline - self._clock())
            return n

    def sweep(self) -> int:
        """Remove expired files; returns how many."""
        gone = 0
        for path in self.dir.iterdir():
            if path.name.startswith(".") or path.suffix == ".tmp":
                continue
            if self._read(path) is None:
                gone += 1
        return gone


class _FileLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = -1

    def __enter__(self) -> None:
        import fcntl

        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        import fcntl

        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
