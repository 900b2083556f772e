"""Keep-alive under `serve()`'s httptools protocol: the idle spell after an answer is timed by
the connection's one deadline timer (limits.py), so an answer arms no timer of its own.

uvicorn's protocol, built as `serve()` builds it, is driven in process on a recording transport
(the helpers of test_coalesce.py) with an event loop that counts the timers asked of it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from rondo.transport.serve.limits import HttpLimits
from tests.client.test_coalesce import Recorder, call, connected, post
from tests.helpers.polling import until

KEEPALIVE = 0.2


class CountingLoop:
    """The running loop, counting the timers a protocol asks it for."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.timers = 0

    def call_at(self, when: float, callback: Any, *args: Any) -> asyncio.TimerHandle:
        self.timers += 1
        return self._loop.call_at(when, callback, *args)

    def call_later(self, delay: float, callback: Any, *args: Any) -> asyncio.TimerHandle:
        self.timers += 1
        return self._loop.call_later(delay, callback, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loop, name)


def kept(limits: HttpLimits) -> tuple[Any, Recorder, CountingLoop]:
    loop = CountingLoop(asyncio.get_running_loop())
    protocol, real, _ = connected("httptools", limits, loop)
    return protocol, real, loop


async def answer(protocol: Any, real: Recorder, a: int) -> None:
    before = len(real.writes)
    protocol.data_received(post(call("add", {"a": a, "b": 2}), "add"))
    await until(lambda: len(real.writes) == before + 1 and protocol.cycle.response_complete)
    assert b'"text":"%d"' % (a + 2) in real.writes[-1]


def test_answers_on_a_kept_connection_arm_no_timer_each() -> None:
    async def main() -> None:
        protocol, real, loop = kept(HttpLimits())
        for a in range(50):
            await answer(protocol, real, a)
        # The header deadline's timer at accept time, and one for the first idle spell (nearer
        # than the header deadline): none per answer, where uvicorn alone makes one each.
        assert loop.timers <= 2
        assert protocol.timeout_keep_alive_task is None
        assert protocol.server_state.total_requests == 50  # uvicorn's count still kept
        assert not real.closed
        protocol.connection_lost(None)

    asyncio.run(main())


def test_an_idle_connection_is_closed_after_the_keep_alive_timeout_not_before() -> None:
    async def main() -> None:
        protocol, real, _ = kept(HttpLimits(keepalive_timeout=KEEPALIVE))
        await answer(protocol, real, 1)
        answered = asyncio.get_running_loop().time()
        await until(lambda: real.closed, 3)
        waited = asyncio.get_running_loop().time() - answered
        assert KEEPALIVE * 0.9 <= waited < KEEPALIVE + 1, waited  # not before the timeout
        assert real.calls[-1] == "close"  # closed quietly: no refusal written
        assert len(real.writes) == 1

    asyncio.run(main())


def test_a_request_in_the_idle_spell_starts_it_again() -> None:
    async def main() -> None:
        protocol, real, _ = kept(HttpLimits(keepalive_timeout=KEEPALIVE))
        clock = asyncio.get_running_loop().time
        await answer(protocol, real, 1)
        await asyncio.sleep(KEEPALIVE * 0.6)
        await answer(protocol, real, 2)
        second = clock()
        await until(lambda: real.closed, 3)
        # Not at the first answer's idle deadline (0.4 of the timeout after the second answer).
        assert clock() - second >= KEEPALIVE * 0.9
        protocol.connection_lost(None)

    asyncio.run(main())


def test_pipelined_requests_are_all_answered_in_order() -> None:
    # A second request sent before the first is answered waits in uvicorn's pipeline; its
    # answer then goes through uvicorn's own on_response_complete path.
    async def main() -> None:
        protocol, real, _ = kept(HttpLimits())
        protocol.data_received(post(call("add", {"a": 1, "b": 2}), "add")
                               + post(call("add", {"a": 5, "b": 2}), "add"))
        await until(lambda: b'"text":"7"' in b"".join(real.writes)
                    and protocol.cycle.response_complete)
        sent = b"".join(real.writes)
        assert sent.count(b"HTTP/1.1 200 OK") == 2
        assert sent.index(b'"text":"3"') < sent.index(b'"text":"7"')
        await answer(protocol, real, 10)
        assert protocol.server_state.total_requests == 3
        protocol.connection_lost(None)

    asyncio.run(main())
