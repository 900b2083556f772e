"""OpenTelemetry over the tasks extension: the task record keeps the context of the span that
created it, and every later `tasks/get`, `tasks/update`, `tasks/cancel` and task-watching
`subscriptions/listen` span names the task and links back to that creation span (with the MRTR
flow id when the task was made in a later round). The SDK's in-memory exporter is the referee."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

import rondo  # noqa: E402
from rondo.state import StatePolicy  # noqa: E402
from rondo.tasks import MemoryTaskStore, Tasks, TaskStore  # noqa: E402
from rondo.tasks.record import decode, encode  # noqa: E402
from tests.helpers import redis_server  # noqa: E402
from tests.helpers.tasks_helpers import Peer, accept, form  # noqa: E402

TASK_ID = "rondo.mcp.task.id"
FLOW_ID = "rondo.mcp.flow.id"


def task_server(exporter: InMemorySpanExporter | None, store: TaskStore | None = None,
                **provider_options: Any) -> rondo.Server:
    tracing = None
    if exporter is not None:
        tracing = TracerProvider(**provider_options)
        tracing.add_span_processor(SimpleSpanProcessor(exporter))
    server = rondo.Server("traced-tasks", state=StatePolicy(secret=b"t" * 32), tracing=tracing)
    server.extension(Tasks(store if store is not None else MemoryTaskStore(), watch_interval=0.02))

    @server.tool(task="optional")
    async def waits(ctx: rondo.Context) -> str:
        await ctx.start_task()
        return (await ctx.ask("go", form("go"))).content["go"]

    @server.tool(task="required")
    async def asks_first(ctx: rondo.Context) -> str:
        name = (await ctx.ask("name", form("name"))).content["name"]
        await ctx.start_task()
        return name + "!" + (await ctx.ask("go", form("go"))).content["go"]

    @server.tool(task="optional")
    def in_a_thread(ctx: rondo.Context) -> str:
        ctx.start_task()
        return str(ctx.ask("go", form("go")).content["go"])

    return server


def named(exporter: InMemorySpanExporter, name: str) -> list[Any]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


def assert_linked(span: Any, creation: Any, task_id: str, flow: str) -> None:
    (link,) = span.links
    assert link.context.trace_id == creation.context.trace_id
    assert link.context.span_id == creation.context.span_id
    assert dict(link.attributes) == {TASK_ID: task_id, FLOW_ID: flow}
    assert span.attributes[TASK_ID] == task_id
    assert span.context.trace_id != creation.context.trace_id  # only the link ties them


def test_a_task_and_its_polls_are_linked_to_its_creation() -> None:
    exporter = InMemorySpanExporter()

    async def go() -> None:
        peer = Peer(task_server(exporter))
        task_id = (await peer.tool("waits"))["taskId"]
        await peer.until(task_id, "input_required")
        await peer.get(task_id)
        await peer.result("tasks/update", {"taskId": task_id, "inputResponses": {"go": accept(go="yes")}})
        done = await peer.until(task_id)
        assert done["result"]["content"][0]["text"] == "yes"
        await peer.result("tasks/cancel", {"taskId": task_id})  # a finished task acks

    asyncio.run(go())
    (creation,) = named(exporter, "tools/call waits")
    assert creation.attributes[TASK_ID] is not None and creation.links == ()
    task_id = creation.attributes[TASK_ID]
    flow = creation.attributes[FLOW_ID]
    polls = named(exporter, "tasks/get")
    assert len(polls) >= 3  # until input_required, the explicit get, until completed
    for span in [*polls, *named(exporter, "tasks/update"), *named(exporter, "tasks/cancel")]:
        assert_linked(span, creation, task_id, flow)


def test_a_task_made_in_the_second_round_of_a_flow_carries_the_flow_id() -> None:
    exporter = InMemorySpanExporter()

    async def go() -> str:
        peer = Peer(task_server(exporter))
        round1 = await peer.tool("asks_first")
        assert round1["resultType"] == "input_required"
        created = await peer.result("tools/call", {
            "name": "asks_first", "arguments": {},
            "inputResponses": {"name": accept(name="Ada")}, "requestState": round1["requestState"]})
        task_id: str = created["taskId"]
        await peer.until(task_id, "input_required")
        await peer.get(task_id)
        return task_id

    task_id = asyncio.run(go())
    first, creation = named(exporter, "tools/call asks_first")
    flow = first.attributes[FLOW_ID]
    assert creation.attributes[FLOW_ID] == flow and creation.attributes["rondo.mcp.flow.round"] == 2
    assert creation.attributes[TASK_ID] == task_id and TASK_ID not in first.attributes
    assert creation.links[0].context.span_id == first.context.span_id  # the round link, as before
    polls = named(exporter, "tasks/get")
    assert len(polls) >= 2
    for span in polls:
        assert_linked(span, creation, task_id, flow)


def test_a_plain_def_task_tool_is_linked_too() -> None:
    exporter = InMemorySpanExporter()

    async def go() -> None:
        peer = Peer(task_server(exporter))
        task_id = (await peer.tool("in_a_thread"))["taskId"]
        await peer.until(task_id, "input_required")

    asyncio.run(go())
    (creation,) = named(exporter, "tools/call in_a_thread")
    polls = named(exporter, "tasks/get")
    assert polls  # until() polled at least once: a loop over nothing would check nothing
    for span in polls:
        assert_linked(span, creation, creation.attributes[TASK_ID], creation.attributes[FLOW_ID])


def test_listen_links_every_watched_task() -> None:
    exporter = InMemorySpanExporter()

    async def go() -> list[str]:
        peer = Peer(task_server(exporter))
        ids = [(await peer.tool("waits"))["taskId"] for _ in range(2)]
        notes: list[dict[str, Any]] = []
        stream = asyncio.ensure_future(peer.call(
            "subscriptions/listen", {"notifications": {"taskIds": [*ids, "unknown"]}}, notes=notes))
        async with asyncio.timeout(5):
            while sum(n["method"] == "notifications/tasks" for n in notes) < 2:
                await asyncio.sleep(0.02)
        stream.cancel()  # the client leaves: the server ends the stream and its span
        async with asyncio.timeout(5):
            while not named(exporter, "subscriptions/listen"):
                await asyncio.sleep(0.02)
        for task_id in ids:
            await peer.result("tasks/cancel", {"taskId": task_id})
        return ids

    ids = asyncio.run(go())
    creations = {s.attributes[TASK_ID]: s for s in named(exporter, "tools/call waits")}
    (listen,) = named(exporter, "subscriptions/listen")
    assert list(listen.attributes[TASK_ID]) == ids  # the unknown id is not named
    assert len(listen.links) == 2
    for link, task_id in zip(listen.links, ids, strict=True):
        creation = creations[task_id]
        assert link.context.span_id == creation.context.span_id
        assert dict(link.attributes) == {TASK_ID: task_id, FLOW_ID: creation.attributes[FLOW_ID]}


def stored(store: MemoryTaskStore, task_id: str) -> bytes:
    return store._tasks[task_id]


def test_without_tracing_the_record_has_no_trace_field() -> None:
    store = MemoryTaskStore()

    async def go() -> str:
        peer = Peer(task_server(None, store))
        task_id: str = (await peer.tool("waits"))["taskId"]
        await peer.until(task_id, "input_required")
        return task_id

    task_id = asyncio.run(go())
    raw = stored(store, task_id)
    assert b'"trace"' not in raw and decode(raw).trace is msgspec.UNSET


def test_a_span_that_does_not_record_stores_nothing() -> None:
    exporter = InMemorySpanExporter()
    store = MemoryTaskStore()

    async def go() -> str:
        peer = Peer(task_server(exporter, store, sampler=ALWAYS_OFF))
        task_id: str = (await peer.tool("waits"))["taskId"]
        await peer.until(task_id, "input_required")
        return task_id

    task_id = asyncio.run(go())
    assert b'"trace"' not in stored(store, task_id)
    assert exporter.get_finished_spans() == ()


def test_the_trace_field_is_plain_json_and_old_records_still_decode() -> None:
    exporter = InMemorySpanExporter()
    store = MemoryTaskStore()

    async def go() -> str:
        peer = Peer(task_server(exporter, store))
        task_id: str = (await peer.tool("waits"))["taskId"]
        await peer.until(task_id, "input_required")
        return task_id

    task_id = asyncio.run(go())
    (creation,) = named(exporter, "tools/call waits")
    origin = msgspec.json.decode(stored(store, task_id))["trace"]
    assert origin == {"t": format(creation.context.trace_id, "032x"),
                      "s": format(creation.context.span_id, "016x"),
                      "f": creation.attributes[FLOW_ID]}
    old = msgspec.json.decode(stored(store, task_id))
    del old["trace"]
    assert decode(msgspec.json.encode(old)).trace is msgspec.UNSET


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)
hexish = st.text("0123456789abcdefx -_", max_size=40)
origins = json_values | st.fixed_dictionaries(
    {}, optional={"t": hexish | json_values, "s": hexish | json_values, "f": json_values})


@settings(max_examples=60, deadline=None)
@given(origins)
def test_a_damaged_trace_field_never_breaks_a_poll(origin: Any) -> None:
    """Whatever a store hands back in `trace` (a damaged or foreign record), the record decodes,
    the poll is answered, and the span gets a valid link or none."""
    exporter = InMemorySpanExporter()
    store = MemoryTaskStore()

    async def go() -> None:
        peer = Peer(task_server(exporter, store))
        task_id = (await peer.tool("waits"))["taskId"]
        record = decode(stored(store, task_id))
        record.trace = origin
        store._tasks[task_id] = encode(record)
        task = await peer.get(task_id)
        assert task["taskId"] == task_id
        await peer.result("tasks/cancel", {"taskId": task_id})

    asyncio.run(go())
    (poll,) = named(exporter, "tasks/get")
    assert poll.attributes[TASK_ID] is not None
    assert len(poll.links) <= 1  # a valid link or none: never a damaged one among others
    for link in poll.links:
        assert link.context.is_valid and link.context.is_remote
        assert isinstance(link.attributes.get(FLOW_ID, ""), str)


@pytest.fixture(scope="module")
def redis_url() -> Any:
    with redis_server.running() as url:
        yield url


@pytest.mark.slow
def test_a_redis_task_store_keeps_the_link(redis_url: str) -> None:
    from rondo.tasks import RedisTaskStore

    exporter = InMemorySpanExporter()

    async def go() -> None:
        store = RedisTaskStore(redis_url)
        server = task_server(exporter, store)
        async with server.started():  # its stop awaits the cancelled question's withdrawal
            peer = Peer(server)
            task_id = (await peer.tool("waits"))["taskId"]
            await peer.until(task_id, "input_required")
            await peer.result("tasks/cancel", {"taskId": task_id})
        await store.aclose()

    asyncio.run(go())
    (creation,) = named(exporter, "tools/call waits")
    polls, cancels = named(exporter, "tasks/get"), named(exporter, "tasks/cancel")
    assert polls and len(cancels) == 1  # a loop over nothing would check nothing
    for span in [*polls, *cancels]:
        assert_linked(span, creation, creation.attributes[TASK_ID], creation.attributes[FLOW_ID])
