"""Eager starts under `serve()`'s httptools protocol (transport/eager.py): a request that never
waits is answered inside the `data_received` call that completed it, with no task; one that
waits becomes a task from that point, and behaves as uvicorn's own task would have.

Driven in process on a recording transport (the helpers of test_coalesce.py), plus the
resumed coroutine on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rondo
from rondo.transport.serve import eager
from tests.client.test_coalesce import Recorder, call, connected, post, protocol_for
from tests.helpers.polling import until


def raw_protocol(app: Any, **options: Any) -> tuple[Any, Recorder]:
    protocol = protocol_for(app, asyncio.get_running_loop(), **options)
    real = Recorder()
    protocol.connection_made(real)
    return protocol, real


async def reply(send: Any, body: bytes, status: int = 200) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def get(path: str) -> bytes:
    return b"GET " + path.encode() + b" HTTP/1.1\r\nHost: x\r\n\r\n"


def test_a_whole_request_is_answered_before_data_received_returns_with_no_task() -> None:
    async def main() -> None:
        protocol, real, _ = connected()
        before = len(asyncio.all_tasks())
        protocol.data_received(post(call("add", {"a": 1, "b": 2}), "add"))
        # No await in between: the answer is written already, and no task was ever made.
        assert len(real.writes) == 1 and b'"text":"3"' in real.writes[0]
        assert protocol.cycle.response_complete
        assert not protocol.tasks
        assert len(asyncio.all_tasks()) == before
        assert protocol.server_state.total_requests == 1
        protocol.connection_lost(None)

    asyncio.run(main())


def test_a_body_still_on_its_way_makes_the_request_wait_in_a_task() -> None:
    async def main() -> None:
        protocol, real, _ = connected()
        raw = post(call("add", {"a": 4, "b": 2}), "add")
        protocol.data_received(raw[:-10])
        assert not real.writes
        assert len(protocol.tasks) == 1  # counted, for limit_concurrency and shutdown
        protocol.data_received(raw[-10:])
        await until(lambda: len(real.writes) == 1)
        assert b'"text":"6"' in real.writes[0]
        await until(lambda: not protocol.tasks)
        protocol.connection_lost(None)

    asyncio.run(main())


def test_an_app_that_waits_mid_answer_is_finished_by_its_task() -> None:
    async def main() -> None:
        protocol, real, release = connected()
        protocol.data_received(post(call("slow", {}), "slow"))
        # The streamed answer's head and first event left eagerly; then the tool waits.
        await until(lambda: b"started" in b"".join(real.writes))
        assert len(protocol.tasks) == 1 and not protocol.cycle.response_complete
        release.set()
        await until(lambda: protocol.cycle.response_complete)
        assert b"done" in b"".join(real.writes)
        await until(lambda: not protocol.tasks)
        protocol.connection_lost(None)

    asyncio.run(main())


@pytest.fixture
def quiet_uvicorn() -> Iterator[None]:
    """uvicorn logs the failures these tests cause on purpose."""
    logger = logging.getLogger("uvicorn.error")
    was, logger.disabled = logger.disabled, True
    yield
    logger.disabled = was


@pytest.mark.usefixtures("quiet_uvicorn")
def test_a_cancelled_waiting_request_sees_the_cancellation() -> None:
    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        try:
            await asyncio.Event().wait()  # forever
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    async def main() -> None:
        protocol, real = raw_protocol(app)
        protocol.data_received(get("/"))
        (task,) = protocol.tasks
        task.cancel()  # before the task's first step, even
        await until(lambda: task.done())
        assert seen == ["cancelled"]
        # uvicorn's wrapper turns what the app raised into its 500, as for its own tasks.
        assert real.writes[0].startswith(b"HTTP/1.1 500")
        await until(lambda: not protocol.tasks)

    asyncio.run(main())


def test_each_request_runs_in_a_context_of_its_own() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("request_path", default="unset")
    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(var.get())
        var.set(scope["path"])
        if scope["path"] == "/wait":
            await asyncio.sleep(0)  # the rest runs in the task, in the same context
            seen.append(var.get())
        await reply(send, b"ok")

    async def main() -> None:
        protocol, real = raw_protocol(app)
        for path in ("/a", "/wait", "/b"):
            protocol.data_received(get(path))
            await until(lambda: protocol.cycle.response_complete)
        assert seen == ["unset", "unset", "/wait", "unset"]
        assert var.get() == "unset"  # nothing leaked into the protocol's own context
        assert len(real.writes) == 3

    asyncio.run(main())


@pytest.mark.usefixtures("quiet_uvicorn")
def test_an_app_that_fails_at_once_gets_uvicorns_500() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise RuntimeError("boom")

    async def main() -> None:
        protocol, real = raw_protocol(app)
        protocol.data_received(get("/"))
        assert real.writes and real.writes[0].startswith(b"HTTP/1.1 500")
        assert not protocol.tasks

    asyncio.run(main())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 1000), min_size=1, max_size=5, unique=True), st.data())
def test_pipelined_requests_in_any_chunking_are_all_answered_in_order(
    numbers: list[int], data: st.DataObject,
) -> None:
    stream = b"".join(post(call("add", {"a": n, "b": 1}), "add") for n in numbers)
    cuts = sorted(data.draw(st.sets(st.integers(1, len(stream) - 1), max_size=6)))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]

    async def main() -> None:
        protocol, real, _ = connected()
        for chunk in chunks:
            protocol.data_received(chunk)
            await asyncio.sleep(0)
        await until(lambda: b"".join(real.writes).count(b"HTTP/1.1 200 OK") == len(numbers)
                    and protocol.cycle.response_complete)
        sent = b"".join(real.writes)
        places = [sent.index(b'"text":"%d"' % (n + 1)) for n in numbers]
        assert places == sorted(places)
        await until(lambda: not protocol.tasks)
        assert protocol.server_state.total_requests == len(numbers)
        protocol.connection_lost(None)

    asyncio.run(main())


# -- the resumed coroutine on its own -------------------------------------------------------

def test_what_a_task_throws_in_reaches_the_coroutine_and_its_value_comes_back() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        failing: asyncio.Future[None] = loop.create_future()
        later: asyncio.Future[int] = loop.create_future()
        got: list[Any] = []

        async def handler() -> None:
            try:
                await failing
            except ValueError as exc:
                got.append(str(exc))
            got.append(await later)

        tasks: set[Any] = set()
        eager.start(handler(), loop, tasks, contextvars.copy_context())
        assert len(tasks) == 1
        failing.set_exception(ValueError("no"))
        await asyncio.sleep(0)
        later.set_result(7)
        await until(lambda: not tasks)
        assert got == ["no", 7]

    asyncio.run(main())


def test_closing_the_resumed_coroutine_closes_the_handler() -> None:
    closed: list[bool] = []

    async def handler() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            closed.append(True)

    async def main() -> None:
        coro = handler()
        waiting_on = coro.send(None)
        resumed = eager.Resumed(coro, waiting_on)
        assert resumed.send(None) is waiting_on  # the task's first step
        resumed.close()
        assert closed == [True] and coro.cr_frame is None

    asyncio.run(main())


def test_a_bare_yield_before_the_first_wait_is_resumed_by_the_tasks_first_step() -> None:
    # `await asyncio.sleep(0)` in the eager phase (a request that needs a task before it
    # waits): the task's first step is already a turn of the loop, so it resumes the handler
    # at once instead of handing the task a bare yield to reschedule (a second step).
    steps: list[str] = []

    async def main() -> None:
        later: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def handler() -> int:
            steps.append("eager")
            await asyncio.sleep(0)
            steps.append("in the task")
            return await later

        coro = handler()
        resumed = eager.Resumed(coro, coro.send(None))
        assert steps == ["eager"]
        assert resumed.send(None) is later  # the first step ran the handler on to its wait
        assert steps == ["eager", "in the task"]
        later.set_result(7)
        try:
            resumed.send(None)
        except StopIteration as stop:
            assert stop.value == 7
        else:
            raise AssertionError("the handler did not finish")

    asyncio.run(main())


def test_a_throw_before_the_first_step_hands_every_later_send_to_the_handler() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        first: asyncio.Future[None] = loop.create_future()
        second: asyncio.Future[int] = loop.create_future()

        async def handler() -> int:
            with contextlib.suppress(ValueError):
                await first
            return await second

        coro = handler()
        resumed = eager.Resumed(coro, coro.send(None))
        assert resumed.throw(ValueError("thrown in")) is second
        second.set_result(5)
        try:
            resumed.send(None)
        except StopIteration as stop:
            assert stop.value == 5
        else:
            raise AssertionError("the handler did not finish")

    asyncio.run(main())


def test_the_context_is_the_one_uvicorns_task_would_get() -> None:
    # uvicorn's task copies the context it is made in; with `reset_contextvars` it starts
    # from an empty one. The eager start gives the request the same.
    outer: contextvars.ContextVar[str] = contextvars.ContextVar("outer", default="none")
    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(outer.get())
        await reply(send, b"ok")

    async def main(reset: bool) -> None:
        protocol, _ = raw_protocol(app, reset_contextvars=reset)
        outer.set("set outside")
        protocol.data_received(get("/"))

    asyncio.run(main(False))
    asyncio.run(main(True))
    assert seen == ["set outside", "none"]


def test_a_plain_tool_answered_at_once_has_no_current_task_and_an_async_one_has() -> None:
    # The documented limit (docs/limits.md): data_received is called by the loop, not by a
    # task, so a request run at once has no current task until it first waits.
    from rondo.transport.http import HttpApp

    server = rondo.Server("eager", state=None, warn_undocumented=False)

    @server.tool
    def plain(a: int) -> str:
        return str(asyncio.current_task() is not None)

    @server.tool
    async def awaited(a: int) -> str:
        return str(asyncio.current_task() is not None)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        protocol, real = raw_protocol(HttpApp(server))
        answers = []
        for name in ("plain", "awaited"):
            before = len(real.writes)
            loop.call_soon(protocol.data_received, post(call(name, {"a": 1}), name))
            await until(lambda n=before: len(real.writes) > n and protocol.cycle.response_complete)
            answers.append(b"".join(real.writes[before:]))
        assert b'"text":"False"' in answers[0] and b'"text":"True"' in answers[1]

    asyncio.run(main())
