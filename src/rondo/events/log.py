"""The event log: every occurrence of an event type, in order, with a cursor per position and a
bounded backlog (older entries are dropped; a cursor behind them reads as `truncated`).

`MemoryEventLog` is one process's; `RedisEventLog` keeps one Redis stream per event type, so
every worker of a fleet reads the same log, and hands each entry to exactly one worker's
webhook deliverer through a consumer group.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import re
from collections.abc import Mapping
from typing import Any, Protocol

Entry = tuple[str, dict[str, Any]]  # (cursor, occurrence)


class BadCursor(ValueError):
    """A cursor this log never issued."""


class EventLog(Protocol):
    shared: bool

    async def append(self, name: str, occurrence: Mapping[str, Any]) -> str: ...
    async def head(self, name: str) -> str: ...
    async def read(self, name: str, after: str, limit: int) -> tuple[list[Entry], bool]: ...
    async def wait(self, name: str, after: str, timeout: float) -> None: ...


_MEMORY = re.compile(r"^m([0-9]{1,19})$")


class MemoryEventLog:
    """Occurrences in this process, at most `backlog` per event type."""

    shared = False

    def __init__(self, backlog: int = 1000) -> None:
        if not isinstance(backlog, int) or backlog < 1:
            raise ValueError("backlog must be a positive integer")
        self.backlog = backlog
        self._entries: dict[str, collections.deque[tuple[int, dict[str, Any]]]] = {}
        self._next: dict[str, int] = {}
        self._changed: dict[str, asyncio.Event] = {}

    def _seq(self, cursor: str) -> int:
        match = _MEMORY.match(cursor) if isinstance(cursor, str) else None
        if match is None:
            raise BadCursor("unknown cursor")
        return int(match.group(1))

    async def append(self, name: str, occurrence: Mapping[str, Any]) -> str:
        seq = self._next.get(name, 0) + 1
        self._next[name] = seq
        self._entries.setdefault(name, collections.deque(maxlen=self.backlog)).append(
            (seq, dict(occurrence)))
        event = self._changed.pop(name, None)
        if event is not None:
            event.set()
        return f"m{seq}"

    async def head(self, name: str) -> str:
        return f"m{self._next.get(name, 0)}"

    async def read(self, name: str, after: str, limit: int) -> tuple[list[Entry], bool]:
        seq = self._seq(after)
        if seq > self._next.get(name, 0):
            raise BadCursor("cursor is ahead of the log")
        entries = self._entries.get(name) or collections.deque()
        oldest = entries[0][0] if entries else self._next.get(name, 0) + 1
        truncated = seq < oldest - 1
        found = [(f"m{s}", o) for s, o in entries if s > seq][:limit]
        return found, truncated

    async def wait(self, name: str, after: str, timeout: float) -> None:
        if self._seq(after) < self._next.get(name, 0):
            return
        event = self._changed.setdefault(name, asyncio.Event())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), timeout)


_STREAM_ID = re.compile(r"^([0-9]{1,20})-([0-9]{1,20})$")


def _id(cursor: str) -> tuple[int, int]:
    match = _STREAM_ID.match(cursor) if isinstance(cursor, str) else None
    if match is None:
        raise BadCursor("unknown cursor")
    return int(match.group(1)), int(match.group(2))


class RedisEventLog:
    """One Redis stream per event type (`<prefix><name>`), trimmed to about `backlog`
    entries. Cursors are stream ids."""

    shared = True

    def __init__(self, url: str, *, prefix: str = "rondo:events:", backlog: int = 1000,
                 group: str = "rondo-webhooks") -> None:
        try:
            import redis.asyncio as aioredis
        except ImportError:
            raise ImportError("RedisEventLog needs the redis package: pip install 'rondo-mcp[redis]'") from None
        if not isinstance(backlog, int) or backlog < 1:
            raise ValueError("backlog must be a positive integer")
        self.url = url
        self.prefix = prefix
        self.backlog = backlog
        self.group = group
        self._factory = aioredis.from_url
        self._clients: dict[int, Any] = {}

    def redis(self) -> Any:
        loop = asyncio.get_running_loop()
        client = self._clients.get(id(loop))
        if client is None:
            client = self._clients[id(loop)] = self._factory(self.url)
        return client

    def key(self, name: str) -> str:
        return self.prefix + name

    async def append(self, name: str, occurrence: Mapping[str, Any]) -> str:
        body = json.dumps(occurrence, separators=(",", ":"))
        cursor = await self.redis().xadd(self.key(name), {"o": body}, maxlen=self.backlog,
                                         approximate=False)
        return cursor.decode() if isinstance(cursor, bytes) else str(cursor)

    async def head(self, name: str) -> str:
        found = await self.redis().xrevrange(self.key(name), count=1)
        if not found:
            info = await self._info(name)
            last = info.get("last-generated-id") if info else None
            return _text(last) if last else "0-0"
        return _text(found[0][0])

    async def _info(self, name: str) -> dict[str, Any] | None:
        import redis

        try:
            info: dict[str, Any] = await self.redis().xinfo_stream(self.key(name))
        except redis.ResponseError:
            return None
        return info

    async def read(self, name: str, after: str, limit: int) -> tuple[list[Entry], bool]:
        position = _id(after)
        info = await self._info(name)
        truncated = False
        if info is not None:
            last = _id(_text(info.get("last-generated-id") or "0-0"))
            if position > last:
                raise BadCursor("cursor is ahead of the log")
            deleted = info.get("max-deleted-entry-id")
            truncated = deleted is not None and position < _id(_text(deleted))
        elif position != (0, 0):
            raise BadCursor("cursor is ahead of the log")
        found = await self.redis().xrange(self.key(name), min=f"({after}", count=limit)
        return [(_text(cid), json.loads(fields[b"o"])) for cid, fields in found], truncated

    async def wait(self, name: str, after: str, timeout: float) -> None:
        _id(after)
        await self.redis().xread({self.key(name): after}, count=1, block=max(1, int(timeout * 1000)))

    # -- one webhook deliverer per entry, across the fleet ---------------------------------------

    async def ensure_group(self, names: list[str]) -> None:
        """The deliverers' consumer group on each stream, from now on (made once)."""
        import redis

        r = self.redis()
        for name in names:
            try:
                await r.xgroup_create(self.key(name), self.group, id="$", mkstream=True)
            except redis.ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise

    async def claim(self, names: list[str], consumer: str, timeout: float,
                    reclaim_after: float = 300.0) -> list[tuple[str, str, dict[str, Any]]]:
        """Entries for this consumer to deliver: (name, cursor, occurrence). First any entry
        another worker took and left unacknowledged for `reclaim_after` seconds (it died
        mid-delivery), then entries no worker of the group has taken yet."""
        r = self.redis()
        await self.ensure_group(names)
        taken: list[tuple[str, str, dict[str, Any]]] = []
        for name in names:
            answer = await r.xautoclaim(self.key(name), self.group, consumer,
                                        min_idle_time=max(1, int(reclaim_after * 1000)),
                                        start_id="0-0", count=50)
            for cid, fields in answer[1]:
                if fields:  # an entry trimmed from the stream meanwhile has no fields
                    taken.append((name, _text(cid), json.loads(fields[b"o"])))
        if taken:
            return taken
        streams = {self.key(n): ">" for n in names}
        answer = await r.xreadgroup(self.group, consumer, streams, count=50,
                                    block=max(1, int(timeout * 1000)))
        for key, entries in answer or []:
            name = _text(key)[len(self.prefix):]
            for cid, fields in entries:
                taken.append((name, _text(cid), json.loads(fields[b"o"])))
        return taken

    async def done(self, name: str, cursor: str) -> None:
        await self.redis().xack(self.key(name), self.group, cursor)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
