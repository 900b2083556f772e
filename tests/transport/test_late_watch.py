"""`LateWatch` (transport/http/late_watch.py): one timer starts the disconnect watchers of the
quiet calls still running when it fires; a call that ended before it never gets one."""

from __future__ import annotations

import asyncio
from typing import Any

from rondo.transport.http.late_watch import LateWatch
from tests.helpers.polling import until


def test_only_the_calls_still_running_when_the_one_timer_fires_get_watchers() -> None:
    started: list[str] = []
    armed: list[float] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        real = loop.call_later

        def counting(delay: float, callback: Any, *args: Any) -> Any:
            if getattr(callback, "__self__", None) is late:  # the polls below sleep too
                armed.append(delay)
            return real(delay, callback, *args)

        loop.call_later = counting  # type: ignore[method-assign]
        late = LateWatch(0.01)
        for key in range(100):
            late.add(key, lambda key=key: started.append(f"call {key}"))
        for key in range(99):  # all but the last end before the timer fires
            late.discard(key)
        assert len(late) == 1
        await until(lambda: started, 5, "the timer never started the watcher")
        assert started == ["call 99"] and len(late) == 0
        # The next call arms the next timer; an ended call's key is no longer there.
        late.discard(99)
        late.add("next", lambda: started.append("next"))
        await until(lambda: len(started) == 2, 5, "the second timer never fired")

    asyncio.run(main())
    assert started == ["call 99", "next"]
    assert armed == [0.01, 0.01]  # one timer per spell, not one per call
