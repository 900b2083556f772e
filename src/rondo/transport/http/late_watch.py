"""Disconnect watchers for calls that wait in their request's own task (`answer.py`'s quiet
lane), started by one timer for all the calls in flight rather than by a timer per call.

A call is registered when it starts and taken out when it ends. The first registration arms a
timer; when it fires, every call still registered gets its watcher (a task reading the
request's ASGI `receive` until the client leaves) and the registry empties, so a call that
outlives the timer is watched, one that ends before it costs two dictionary operations and no
timer of its own. Under steady load that is one timer per `after` seconds, whatever the rate.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


class LateWatch:
    __slots__ = ("after", "_calls", "_handle")

    def __init__(self, after: float) -> None:
        self.after = after
        self._calls: dict[Any, Callable[[], None]] = {}
        self._handle: asyncio.TimerHandle | None = None

    def add(self, key: Any, start: Callable[[], None]) -> None:
        """Call `start()` (which starts the watcher) if `key`'s call is still registered when
        the timer fires, between now and `after` seconds on."""
        self._calls[key] = start
        if self._handle is None:
            self._handle = asyncio.get_running_loop().call_later(self.after, self._fire)

    def discard(self, key: Any) -> None:
        self._calls.pop(key, None)

    def __len__(self) -> int:
        return len(self._calls)

    def _fire(self) -> None:
        self._handle = None
        calls, self._calls = self._calls, {}
        for start in calls.values():
            start()
