"""Request deadlines: each request in flight cancels its waiting task when its time is up.

One timer serves all of a client's requests in flight (`Deadlines`), armed for the earliest
deadline, instead of a timer made and cancelled per request (on uvloop a timer handle and its
libuv timer cost a relayed call about 3% of a proxy's work). A request adds its `Deadline` when
sent and drops it when answered: two dictionary operations. When the timer fires it expires
every deadline that has come and arms itself for the earliest left, so each request is
cancelled at its own deadline as a timer of its own would have done. Progress moves a deadline
on (never earlier), which needs no timer work at all: the timer finds it later than it was and
re-arms.
"""

from __future__ import annotations

import asyncio
from typing import Any


class Deadline:
    """One request's deadline: `when` (the loop's clock), the task it cancels."""

    __slots__ = ("owner", "task", "cancelling", "when", "expired", "moved")

    def __init__(self, owner: Deadlines, task: asyncio.Task[Any], when: float) -> None:
        self.owner = owner
        self.task = task
        self.cancelling = task.cancelling()  # cancellations already asked of it
        self.when = when
        self.expired = False
        self.moved = False  # pushed on by progress

    def end(self) -> None:
        """The request was answered (or failed): its deadline no longer counts."""
        self.owner.discard(self)

    def move(self, when: float) -> None:
        """Progress: the deadline is now `when` (later than it was)."""
        if not self.expired and when > self.when:
            self.when = when
            self.moved = True


class Deadlines:
    """The deadlines of one client's requests in flight, on one timer (module docstring)."""

    __slots__ = ("loop", "_pending", "_handle", "_armed_for")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._pending: dict[Deadline, None] = {}
        self._handle: asyncio.TimerHandle | None = None
        self._armed_for = 0.0

    def add(self, task: asyncio.Task[Any], seconds: float) -> Deadline:
        deadline = Deadline(self, task, self.loop.time() + seconds)
        self._pending[deadline] = None
        if self._handle is None or deadline.when < self._armed_for:
            self._arm(deadline.when)
        return deadline

    def discard(self, deadline: Deadline) -> None:
        # The timer stays armed even when nothing is left in flight (cancelling it would make
        # one timer per request again when requests go one at a time); it finds nothing due
        # and is not re-armed until the next request.
        self._pending.pop(deadline, None)

    def __len__(self) -> int:
        return len(self._pending)

    def _arm(self, when: float) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._handle = self.loop.call_at(when, self._fire)
        self._armed_for = when

    def _fire(self) -> None:
        self._handle = None
        now = self.loop.time()
        pending = self._pending
        due = [deadline for deadline in pending if deadline.when <= now]
        for deadline in due:
            del pending[deadline]
            deadline.expired = True
            deadline.task.cancel()
        if pending:
            self._arm(min(deadline.when for deadline in pending))
