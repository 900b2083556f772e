"""Issue 16 item 7: legacy replay memory, GET streams per session, eviction under a flood."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import rondo
from rondo.legacy import LegacyConfig
from rondo.legacy.sessions import LegacySession, SessionTable
from rondo.transport.http import HttpApp
from rondo.transport.http.legacy import HttpState, ReplayBudget
from tests.legacy.test_legacy_http import Exchange, Session

NOTE = {"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": "x" * 100}}


def fill(state: HttpState, streams: int = 64, events: int = 256) -> None:
    """What one idle session accumulates: dropped request streams full of events."""
    for _ in range(streams):
        stream = state.open_stream()
        for _ in range(events):
            stream.push(NOTE)


def test_replay_memory_is_bounded_per_session_and_in_total() -> None:
    budget = ReplayBudget(per_session=64 * 1024, total=4 * 1024 * 1024)
    states = [HttpState(budget) for _ in range(400)]
    for state in states:
        # ~200 KB of events over 64 streams, three times the session's budget (a full `fill`,
        # ~1.5 MB, checks nothing more and costs 6.5 million pushes for 400 sessions).
        fill(state, events=16)
        assert state.used <= budget.per_session + 1024
        assert state.used == sum(len(f) for s in state.streams.values() for _, f in s.events)
    # Before: unbounded, 400 sessions about 80 MB here. Now the endpoint's total holds.
    assert budget.used <= budget.total + 400 * 1024
    for state in states:
        state.close(None)  # type: ignore[arg-type]
    assert budget.used == 0


def test_the_newest_events_survive_the_trim() -> None:
    state = HttpState(ReplayBudget(per_session=8 * 1024, total=1 << 30))
    stream = state.open_stream()
    for i in range(500):
        stream.push({"jsonrpc": "2.0", "method": "notifications/progress",
                     "params": {"progressToken": 1, "progress": i}})
    assert stream.events and stream.events[-1][0] == 500
    assert [s for s, _ in stream.events] == list(range(500 - len(stream.events) + 1, 501))


def test_an_initialize_flood_evicts_sessions_that_never_completed_a_request_first() -> None:
    table = SessionTable(max_sessions=3, idle_timeout=600)
    real = LegacySession("real", "2025-11-25", {}, None, None)
    real.completed = True
    table.add(real)
    for i in range(50):
        table.add(LegacySession(f"flood{i}", "2025-11-25", {}, None, None))
    assert table.get("real") is real


def test_sessions_holding_only_streams_can_be_evicted_so_initialize_keeps_working() -> None:
    class Streaming:
        live = 1

    table = SessionTable(max_sessions=2, idle_timeout=600)
    for i in range(2):
        s = LegacySession(f"s{i}", "2025-11-25", {}, None, None)
        s.transport = Streaming()
        table.add(s)
    table.add(LegacySession("new", "2025-11-25", {}, None, None))  # before: SessionLimit (503)
    assert table.get("new") is not None and len(table) == 2


def test_get_streams_per_session_are_capped() -> None:
    server = rondo.Server("legacy-caps", state=None)
    app = HttpApp(server, legacy=LegacyConfig(max_get_streams=2))

    async def go() -> list[int]:
        session = Session(app)
        await session.open()
        state: HttpState = app.legacy.sessions.get(session.sid).transport
        streams = [state.open_stream() for _ in range(3)]
        for stream in streams:  # request streams whose connections dropped, to be resumed
            stream.push(NOTE)
        statuses = []
        opened: list[Exchange] = []
        for stream in streams:
            ex = Exchange(app, "GET", session.headers(accept="text/event-stream",
                                                      **{"last-event-id": stream.event_id(0)}))
            statuses.append((await ex.start())[0])
            opened.append(ex)
        for ex in opened:
            ex.disconnect()
        # The disconnected streams' handlers end (and give their slots back) before the next.
        await asyncio.gather(*(ex.task for ex in opened), return_exceptions=True)
        again = Exchange(app, "GET", session.headers(accept="text/event-stream"))
        statuses.append((await again.start())[0])
        again.disconnect()
        await asyncio.gather(again.task, return_exceptions=True)
        return statuses

    assert asyncio.run(asyncio.wait_for(go(), 10)) == [200, 200, 409, 200]


def test_bad_limits_fail_at_start_up() -> None:
    with pytest.raises(ValueError, match="max_replay_bytes"):
        LegacyConfig(max_replay_bytes=0)


class Walked(dict[Any, Any]):
    """A session's stream table that counts every entry a walk over it yields."""

    def __init__(self, tally: list[int]) -> None:
        super().__init__()
        self.tally = tally

    def __iter__(self) -> Iterator[Any]:
        for key in super().__iter__():
            self.tally[0] += 1
            yield key

    def values(self) -> Iterator[Any]:  # type: ignore[override]
        for value in super().values():
            self.tally[0] += 1
            yield value

    def items(self) -> Iterator[tuple[Any, Any]]:  # type: ignore[override]
        for item in super().items():
            self.tally[0] += 1
            yield item


def streams_walked(make: Callable[[], HttpState], streams: int, events: int) -> int:
    """How many stream entries the session's tables yielded while `fill` pushed its events."""
    tally = [0]
    state = make()
    state.streams, state.holding = Walked(tally), Walked(tally)
    fill(state, streams, events)
    return tally[0]


def test_the_cost_of_an_event_does_not_grow_with_streams_or_a_spent_endpoint_budget() -> None:
    # Every push over the budget drops one old event. That drop used to walk every stream of the
    # session (twice once the endpoint's total was spent by other sessions): a flood of small
    # notifications went quadratic. Counted, not timed: the same 16384 events over 64, 128 and
    # 256 streams, with the endpoint roomy and spent. A walk of every stream per event would
    # yield 1-4 million entries here; the drop now looks at about one stream per event.
    def roomy() -> HttpState:
        return HttpState(ReplayBudget(per_session=64 * 1024, total=1 << 30))

    def spent() -> HttpState:
        budget = ReplayBudget(per_session=64 * 1024, total=256 * 1024)
        for _ in range(4):
            fill(HttpState(budget), events=8)
        assert budget.total - budget.used < 1024  # the next few events are over it
        return HttpState(budget)

    events = 16384
    for make in (roomy, spent):
        walked = [streams_walked(make, n, events // n) for n in (64, 128, 256)]
        assert all(w <= 2 * events for w in walked), (make.__name__, walked)
        # Twice the streams, the same events: the same work, not twice it.
        assert walked[1] < 1.25 * walked[0] and walked[2] < 1.25 * walked[1], (make.__name__, walked)
