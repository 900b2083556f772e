"""Issue 16 item 7: legacy replay memory, GET streams per session, eviction under a flood."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

import rondo
from rondo.legacy import LegacyConfig
from rondo.legacy.sessions import LegacySession, SessionTable
from rondo.transport.http import HttpApp
from rondo.transport.http.legacy import HttpState, ReplayBudget
from test_legacy_http import Exchange, Session

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
        await asyncio.sleep(0.05)
        again = Exchange(app, "GET", session.headers(accept="text/event-stream"))
        statuses.append((await again.start())[0])
        again.disconnect()
        await asyncio.gather(*(ex.task for ex in [*opened, again]), return_exceptions=True)
        return statuses

    assert asyncio.run(asyncio.wait_for(go(), 10)) == [200, 200, 409, 200]


def test_bad_limits_fail_at_start_up() -> None:
    with pytest.raises(ValueError, match="max_replay_bytes"):
        LegacyConfig(max_replay_bytes=0)


def best_fill_time(make: Callable[[], HttpState], streams: int, events: int) -> float:
    """CPU seconds of the fastest of five fills (this process's own time, the least disturbed
    by the rest of the machine)."""
    times = []
    for _ in range(5):
        state = make()
        start = time.process_time()
        fill(state, streams, events)
        times.append(time.process_time() - start)
    return min(times)


def test_the_cost_of_an_event_does_not_grow_with_streams_or_a_spent_endpoint_budget() -> None:
    # Every push over the budget drops one old event. That drop used to walk every stream of the
    # session (twice once the endpoint's total was spent by other sessions): a flood of small
    # notifications went quadratic. Compared with itself, so tracing or a busy machine cannot
    # fail it: the same 16384 events over 4 streams, over 64, and with the endpoint spent.
    def roomy() -> HttpState:
        return HttpState(ReplayBudget(per_session=64 * 1024, total=1 << 30))

    def spent() -> HttpState:
        budget = ReplayBudget(per_session=64 * 1024, total=256 * 1024)
        for _ in range(4):
            fill(HttpState(budget), events=8)
        assert budget.total - budget.used < 1024  # the next few events are over it
        return HttpState(budget)

    # Each configuration against itself with 16x the streams: a walk of every stream per event
    # costs 3-7x more there; a constant extra cost of the spent path (more lines per event,
    # which a tracer magnifies) cancels out.
    few = best_fill_time(roomy, 4, 4096)
    many = best_fill_time(roomy, 64, 256)
    spent_few = best_fill_time(spent, 4, 4096)
    spent_many = best_fill_time(spent, 64, 256)
    assert many < 2 * few, (few, many)
    assert spent_many < 2 * spent_few, (spent_few, spent_many)
