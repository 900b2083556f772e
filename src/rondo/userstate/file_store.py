"""`FileStore`: per-user state in one SQLite file, so it outlives restarts and is shared by the
worker processes of one host (not by separate hosts: use `RedisStore` there).

Each operation is one transaction (`BEGIN IMMEDIATE` for the ones that read then write), so
`cas` and `take` stay atomic across processes. Expiry is wall-clock time; expired rows are
skipped on read and swept on write.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import StoreUnavailable
from .store import SyncBacked

_SCHEMA = "CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value BLOB NOT NULL, expires REAL)"


class FileStore(SyncBacked):
    """`path` is the SQLite file (created with its directory if missing)."""

    shared = True

    def __init__(self, path: str | Path, *, timeout: float = 5.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.timeout = timeout
        self._clock = clock
        self._local = threading.local()
        with self._tx() as db:  # fails now, at start-up, if the file cannot be used
            db.execute(_SCHEMA)
            db.execute("CREATE INDEX IF NOT EXISTS state_expires ON state (expires)")

    def _db(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            self._local.db = db
        return db

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        try:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreUnavailable(
                f"user state is unavailable (its file store failed: {type(exc).__name__}); "
                "nothing was changed") from None

    def _read(self, db: sqlite3.Connection, key: str) -> bytes | None:
        row = db.execute("SELECT value, expires FROM state WHERE key = ?", (key,)).fetchone()
        if row is None or (row[1] is not None and row[1] <= self._clock()):
            return None
        return bytes(row[0])

    def _write(self, db: sqlite3.Connection, key: str, value: bytes, ttl: float | None) -> None:
        now = self._clock()
        db.execute("DELETE FROM state WHERE expires IS NOT NULL AND expires <= ?", (now,))
        db.execute("INSERT OR REPLACE INTO state (key, value, expires) VALUES (?, ?, ?)",
                   (key, value, None if ttl is None else now + ttl))

    def get_sync(self, key: str) -> bytes | None:
        with self._tx() as db:
            return self._read(db, key)

    def set_sync(self, key: str, value: bytes, ttl: float | None) -> None:
        with self._tx() as db:
            self._write(db, key, value, ttl)

    def delete_sync(self, key: str) -> bool:
        with self._tx() as db:
            found = self._read(db, key) is not None
            db.execute("DELETE FROM state WHERE key = ?", (key,))
            return found

    def cas_sync(self, key: str, expected: bytes | None, new: bytes | None,
                 ttl: float | None) -> bool:
        with self._tx() as db:
            if self._read(db, key) != expected:
                return False
            if new is None:
                db.execute("DELETE FROM state WHERE key = ?", (key,))
            else:
                self._write(db, key, new, ttl)
            return True

    def take_sync(self, key: str) -> bytes | None:
        with self._tx() as db:
            value = self._read(db, key)
            db.execute("DELETE FROM state WHERE key = ?", (key,))
            return value
