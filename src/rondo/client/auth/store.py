"""Where signed-in state lives between requests and runs: tokens keyed by authorization server
and resource, client registrations keyed by authorization server.

A store maps string keys to JSON-ready dicts. `MemoryTokenStore` (the default) forgets
everything with the process; `FileTokenStore` keeps one JSON file, created 0600 and replaced
atomically, for terminal tools such as `rondo call`. Write your own (a keyring, a database)
by implementing the three async methods of `TokenStore`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from rondo.client.auth.errors import AuthError


@runtime_checkable
class TokenStore(Protocol):
    async def get(self, key: str) -> dict[str, Any] | None: ...

    async def set(self, key: str, value: dict[str, Any]) -> None: ...

    async def delete(self, key: str) -> None: ...


def token_key(issuer: str, resource: str) -> str:
    return f"token {issuer} {resource}"


def client_key(issuer: str) -> str:
    return f"client {issuer}"


def server_key(server_url: str) -> str:
    """Which issuer and resource last guarded this server URL (so a later run can send its
    stored token straight away instead of discovering first)."""
    return f"server {server_url}"


class MemoryTokenStore:
    """In-process store; the default."""

    def __init__(self) -> None:
        self._data: dict[str, dict[str, Any]] = {}

    async def get(self, key: str) -> dict[str, Any] | None:
        value = self._data.get(key)
        return dict(value) if value is not None else None

    async def set(self, key: str, value: dict[str, Any]) -> None:
        self._data[key] = dict(value)

    async def delete(self, key: str) -> None:
        self._data.pop(key, None)


class FileTokenStore:
    """One JSON file, readable by its owner only (0600, in a 0700 folder it creates).

    A file that is not this store's JSON is an `AuthError` at first use, never silently
    replaced. Processes sharing a file do not lock it: the last writer wins (each write is
    atomic, so the file is never half-written)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._lock = asyncio.Lock()

    @classmethod
    def default(cls) -> FileTokenStore:
        """`$XDG_STATE_HOME/rondo/tokens.json` (else `~/.local/state/rondo/tokens.json`)."""
        base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
        return cls(Path(base) / "rondo" / "tokens.json")

    def _load(self) -> dict[str, dict[str, Any]]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        try:
            data = json.loads(text) if text.strip() else {}
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise AuthError(f"{self.path} is not a rondo token store (move it away to start afresh)")
        return data

    def _save(self, data: dict[str, dict[str, Any]]) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tokens-", dir=self.path.parent)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    async def get(self, key: str) -> dict[str, Any] | None:
        async with self._lock:
            value = self._load().get(key)
        return dict(value) if isinstance(value, dict) else None

    async def set(self, key: str, value: dict[str, Any]) -> None:
        async with self._lock:
            data = self._load()
            data[key] = dict(value)
            self._save(data)

    async def delete(self, key: str) -> None:
        async with self._lock:
            data = self._load()
            if data.pop(key, None) is not None:
                self._save(data)
