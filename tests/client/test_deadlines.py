"""`Deadlines` (client/deadlines.py): one timer for all of a client's requests in flight, and
still every request cancelled at its own deadline, never before it; progress moves one on."""

from __future__ import annotations

import asyncio
from typing import Any

from rondo.client.deadlines import Deadline, Deadlines


async def waiting() -> None:
    await asyncio.get_running_loop().create_future()  # never done: only a cancel ends it


def ended_at(task: asyncio.Task[None], loop: asyncio.AbstractEventLoop) -> list[float]:
    when: list[float] = []
    task.add_done_callback(lambda _t: when.append(loop.time()))
    return when


def test_each_request_is_cancelled_at_its_own_deadline_on_one_timer() -> None:
    async def main() -> tuple[list[float], list[float], Deadline, Deadline, list[Any]]:
        loop = asyncio.get_running_loop()
        armed: list[Any] = []
        real = loop.call_at

        def counting(when: float, callback: Any, *args: Any) -> Any:
            if getattr(callback, "__self__", None) is deadlines:
                armed.append(when)
            return real(when, callback, *args)

        loop.call_at = counting  # type: ignore[method-assign]
        deadlines = Deadlines(loop)
        late_task = asyncio.ensure_future(waiting())
        soon_task = asyncio.ensure_future(waiting())
        late = deadlines.add(late_task, 0.4)
        soon = deadlines.add(soon_task, 0.05)  # earlier than the timer's: it re-arms
        for _ in range(50):  # requests answered at once add and drop without a timer each
            deadlines.discard(deadlines.add(asyncio.ensure_future(asyncio.sleep(0)), 0.4))
        late_end, soon_end = ended_at(late_task, loop), ended_at(soon_task, loop)
        await asyncio.wait({soon_task})
        assert soon_task.cancelled() and not late_task.done()
        await asyncio.wait({late_task})
        assert late_task.cancelled() and len(deadlines) == 0
        return late_end, soon_end, late, soon, armed

    late_end, soon_end, late, soon, armed = asyncio.run(main())
    assert soon.expired and late.expired
    assert soon_end[0] >= soon.when and late_end[0] >= late.when  # never before its deadline
    assert armed == [late.when, soon.when, late.when]  # three timers for 52 requests


def test_progress_moves_a_deadline_on_and_never_back() -> None:
    async def main() -> tuple[list[float], Deadline, float]:
        loop = asyncio.get_running_loop()
        deadlines = Deadlines(loop)
        task = asyncio.ensure_future(waiting())
        deadline = deadlines.add(task, 0.05)
        first = deadline.when
        deadline.move(first - 1)  # earlier: ignored
        assert deadline.when == first and not deadline.moved
        deadline.move(first + 0.2)
        end = ended_at(task, loop)
        await asyncio.wait({task})
        return end, deadline, first

    end, deadline, first = asyncio.run(main())
    assert deadline.moved and deadline.expired
    assert end[0] >= first + 0.2  # not at the first deadline: the timer re-armed for the new
