"""rondo.gateway.mount: a child server's components served by a parent, on both eras."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import rondo
from rondo import InputRequired, elicit
from rondo.client import Client, ElicitRequest, ElicitResult
from rondo.gateway import mount

COLOR = elicit.form("Pick a color", {
    "type": "object",
    "properties": {"color": {"type": "string", "enum": ["red", "blue"]}},
    "required": ["color"],
})
ERAS = ["2025-11-25", "2026-07-28"]


def build() -> tuple[rondo.Server, rondo.Server, list[str]]:
    events: list[str] = []
    parent = rondo.Server("parent")
    child = rondo.Server("weather", state=None)  # the parent's policy must be the one sealing

    @parent.tool
    def ping() -> str:
        """The parent's own tool."""
        return "pong"

    @child.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @child.tool
    def color(ctx: rondo.Context) -> str:
        """Ask with ctx.ask."""
        answer = ctx.ask("color", COLOR)
        return f"color={answer.content['color']} db={ctx.lifespan['db']}"

    @child.tool
    def cleanup(folder: str, ctx: rondo.Context) -> object:
        """The explicit style, with state the parent seals."""
        answer = elicit.response(ctx, "confirm", COLOR)
        if answer is elicit.MISSING:
            return InputRequired({"confirm": COLOR}, state={"files": 3})
        return f"{ctx.state['files']} files in {folder}, {answer.content['color']}"

    @child.prompt
    def greet(name: str) -> str:
        """Say hello."""
        return f"Hello {name}"

    @child.resource("weather://today", mime_type="text/plain")
    def today() -> str:
        """Today's weather."""
        return "sunny"

    @child.resource("weather://city/{name}", mime_type="text/plain")
    def city(name: str) -> str:
        """A city's weather."""
        return f"rain in {name}"

    @child.lifespan
    async def database(server: rondo.Server) -> Any:
        events.append(f"start {server.name}")
        yield {"db": "pool"}
        events.append(f"stop {server.name}")

    mount(parent, child, namespace="weather")
    return parent, child, events


def blue(request: ElicitRequest) -> Any:
    return ElicitResult("accept", {"color": "blue"})


@pytest.mark.parametrize("protocol", ERAS)
def test_listed_under_the_namespace_and_called_through_the_parent(protocol: str) -> None:
    parent, _, events = build()

    async def go() -> None:
        async with parent.started(), Client(parent, protocol=protocol, on_elicit=blue) as client:
            names = sorted(t.name for t in await client.list_tools())
            assert names == ["ping", "weather_add", "weather_cleanup", "weather_color"]
            assert (await client.call_tool("weather_add", {"a": 2, "b": 3})).text == "5"
            assert (await client.call_tool("weather_color")).text == "color=blue db=pool"
            assert (await client.call_tool("weather_cleanup", {"folder": "/t"})).text == (
                "3 files in /t, blue")
            assert [p.name for p in await client.list_prompts()] == ["weather_greet"]
            prompt = await client.get_prompt("weather_greet", {"name": "Ada"})
            assert prompt.messages[0].content["text"] == "Hello Ada"
            uris = [r.uri for r in await client.list_resources()]
            assert uris == ["weather://today"]
            templates = [t.uri_template for t in await client.list_resource_templates()]
            assert templates == ["weather://city/{name}"]
            assert (await client.read_resource("weather://city/Oslo")).text == "rain in Oslo"
            with pytest.raises(rondo.McpError, match="Unknown tool: weather_nothing"):
                await client.call_tool("weather_nothing")
            with pytest.raises(rondo.McpError, match="Unknown tool: add"):
                await client.call_tool("add", {"a": 1, "b": 1})  # only the namespaced name

    asyncio.run(go())
    assert events == ["start weather", "stop weather"]  # the child's lifespan, with its own server


def test_modern_rounds_are_sealed_by_the_parents_policy() -> None:
    parent, _, _ = build()
    seen: list[dict[str, Any]] = []

    async def go() -> None:
        async with Client(parent, protocol="2026-07-28", on_elicit=blue) as client:
            original = client.transport.request

            async def recording(message: dict[str, Any], headers: Any = None) -> dict[str, Any]:
                answer = await original(message, headers)
                seen.append(answer)
                return answer

            client.transport.request = recording  # type: ignore[method-assign]
            await client.call_tool("weather_cleanup", {"folder": "/t"})

    asyncio.run(go())
    first = seen[0]["result"]
    assert first["resultType"] == "input_required"
    token = first["requestState"]
    assert parent.state_policy is not None
    # The parent's policy opens what it sealed; tampered, it is refused with -32602.
    forged = token[:-2] + ("AA" if token[-2:] != "AA" else "BB")

    async def tamper() -> None:
        async with Client(parent, protocol="2026-07-28") as client:
            reply = await client.transport.request({
                "jsonrpc": "2.0", "id": 99, "method": "tools/call",
                "params": {"name": "weather_cleanup", "arguments": {"folder": "/t"},
                           "requestState": forged,
                           "inputResponses": {"confirm": {"action": "accept",
                                                          "content": {"color": "red"}}},
                           "_meta": client_meta(client)}})
            assert reply["error"]["code"] == -32602

    asyncio.run(tamper())


def client_meta(client: Client) -> dict[str, Any]:
    from rondo.wire.meta import CLIENT_CAPABILITIES, CLIENT_INFO, PROTOCOL_VERSION

    return {PROTOCOL_VERSION: "2026-07-28", CLIENT_INFO: {"name": "t", "version": "1"},
            CLIENT_CAPABILITIES: {"elicitation": {"form": {}}}}


@pytest.mark.parametrize("protocol", ERAS)
def test_live_a_component_added_to_the_child_later_is_listed_and_announced(protocol: str) -> None:
    parent, child, _ = build()

    async def go() -> None:
        heard: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        async with Client(parent, protocol=protocol, on_notification=heard.put_nowait) as client:
            await client.list_tools()
            if protocol == "2026-07-28":  # modern: a listen stream; legacy: the session
                sub = await client.listen(tools=True).__aenter__()
                next_note: Any = sub.__anext__
            else:
                next_note = heard.get

            @child.tool
            def later() -> str:
                """Added after the mount."""
                return "late"

            note = await asyncio.wait_for(next_note(), 5)
            assert note["method"] == "notifications/tools/list_changed"
            assert "weather_later" in [t.name for t in await client.list_tools()]
            assert (await client.call_tool("weather_later")).text == "late"
            child.remove_tool("later")
            note = await asyncio.wait_for(next_note(), 5)
            assert note["method"] == "notifications/tools/list_changed"
            assert "weather_later" not in [t.name for t in await client.list_tools()]
            if protocol == "2026-07-28":
                await sub.__aexit__(None, None, None)

    asyncio.run(go())


def test_a_child_resource_update_reaches_the_parents_subscribers() -> None:
    parent, child, _ = build()

    async def go() -> None:
        async with Client(parent) as client, client.listen(
                resource_uris=["weather://city/Oslo"]) as sub:
            child.notify_resource_updated("weather://city/Oslo")
            note = await asyncio.wait_for(sub.__anext__(), 5)
            assert note["method"] == "notifications/resources/updated"
            assert note["params"]["uri"] == "weather://city/Oslo"

    asyncio.run(go())


def test_unmount_takes_the_components_out() -> None:
    parent, child, _ = build()
    made = mount(parent, rondo.Server("other"), namespace="other")
    made.unmount()
    assert sorted(parent.tools) == ["ping", "weather_add", "weather_cleanup", "weather_color"]
    mount(parent, rondo.Server("other"), namespace="other")  # the namespace is free again


@pytest.mark.parametrize("namespace", ["", "a_b", "-x", "x/y", "x y", "é", "a" * 65, 3])
def test_bad_namespaces_are_refused(namespace: Any) -> None:
    with pytest.raises(ValueError, match="namespace must match"):
        mount(rondo.Server("p"), rondo.Server("c"), namespace=namespace)


def test_clashes_and_uncarried_options_are_refused_when_mounting() -> None:
    parent, child, _ = build()
    with pytest.raises(ValueError, match="'weather' is mounted twice"):
        mount(parent, rondo.Server("again"), namespace="weather")
    clash = rondo.Server("clash")

    @clash.resource("weather://today")
    def mine() -> str:
        """Same URI as the mounted child's."""
        return "x"

    with pytest.raises(ValueError, match="served by both"):
        mount(parent, clash, namespace="w2")
    own = rondo.Server("own")

    @own.tool(name="x_y")
    def first() -> str:
        """Named like a mounted tool."""
        return "1"

    nested = rondo.Server("nested")

    @nested.tool
    def y() -> str:
        """Would become x_y."""
        return "2"

    with pytest.raises(ValueError, match="'x_y' is already served"):
        mount(own, nested, namespace="x")
    with pytest.raises(ValueError, match="on itself"):
        mount(parent, parent, namespace="self")


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
def test_completion_refs_are_routed_to_the_child_under_its_own_names(protocol: str) -> None:
    parent = rondo.Server("p")
    seen: list[tuple[str, Any]] = []

    @parent.prompt
    def mine(topic: str) -> str:
        """The parent's own prompt."""
        return topic

    @parent.completion
    def own(ref: Any, argument: Any, context: Any) -> list[str]:
        seen.append(("parent", ref))
        return ["parent-value"]

    child = rondo.Server("c")

    @child.prompt
    def greet(name: str) -> str:
        """Say hello."""
        return name

    @child.resource("c://city/{name}")
    def city(name: str) -> str:
        """A city."""
        return name

    @child.completion
    async def theirs(ref: Any, argument: Any, context: Any) -> list[str]:
        seen.append(("child", ref))
        return [f"{argument['value']}-child"]

    mount(parent, child, namespace="kid")

    async def go() -> None:
        async with Client(parent, protocol=protocol) as client:
            done = await client.complete({"type": "ref/prompt", "name": "kid_greet"}, "name", "A")
            assert done.values == ["A-child"]
            done = await client.complete({"type": "ref/resource", "uri": "c://city/{name}"},
                                         "name", "R")
            assert done.values == ["R-child"]
            done = await client.complete({"type": "ref/prompt", "name": "mine"}, "topic", "x")
            assert done.values == ["parent-value"]

    asyncio.run(go())
    # The child saw its own prompt name, never the namespaced one.
    assert seen == [("child", {"type": "ref/prompt", "name": "greet"}),
                    ("child", {"type": "ref/resource", "uri": "c://city/{name}"}),
                    ("parent", {"type": "ref/prompt", "name": "mine"})]


async def _passthrough(request: Any, call_next: Any) -> Any:
    return await call_next(request)


def audited() -> tuple[rondo.Server, list[str]]:
    """A parent with its own tool and middleware, a child with two middleware (one audits, one
    refuses `secret`), and a second child without any."""
    seen: list[str] = []

    async def outer(request: Any, call_next: Any) -> Any:
        seen.append(f"parent {request.name}")
        return await call_next(request)

    async def audit(request: Any, call_next: Any) -> Any:
        seen.append(f"child-1 {request.name}")
        result = await call_next(request)
        seen.append(f"child-1 done {type(result).__name__}")
        return result

    async def refuse(request: Any, call_next: Any) -> Any:
        seen.append(f"child-2 {request.name}")
        if request.name == "secret":
            raise rondo.McpError(-32001, "the child's middleware says no")
        return await call_next(request)

    parent = rondo.Server("p", middleware=[outer])
    child = rondo.Server("c", middleware=[audit, refuse])
    other = rondo.Server("o")

    @parent.tool
    def ping() -> str:
        """The parent's own."""
        return "pong"

    @child.tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    @child.tool
    def secret() -> str:
        """Refused by the child's middleware."""
        return "leaked"

    @child.prompt
    def greet(name: str) -> str:
        """Hello."""
        return f"Hello {name}"

    @child.resource("c://city/{name}")
    def city(name: str) -> str:
        """A city."""
        return f"rain in {name}"

    @other.tool
    def echo(text: str) -> str:
        """Another mount's tool."""
        return text

    mount(parent, child, namespace="kid")
    mount(parent, other, namespace="other")
    return parent, seen


@pytest.mark.parametrize("protocol", ERAS)
def test_a_childs_server_middleware_runs_for_its_components_only(protocol: str) -> None:
    parent, seen = audited()

    async def go() -> None:
        async with Client(parent, protocol=protocol) as client:
            seen.clear()
            assert (await client.call_tool("ping")).text == "pong"
            assert (await client.call_tool("other_echo", {"text": "hi"})).text == "hi"
            # Neither the parent's own tool nor another mount's reaches the child's chain.
            assert seen == ["parent ping", "parent other_echo"]
            seen.clear()
            assert (await client.call_tool("kid_add", {"a": 2, "b": 3})).text == "5"
            # parent first (outermost), then the child's in its order, under the child's name.
            assert seen == ["parent kid_add", "child-1 add", "child-2 add", "child-1 done dict"]
            seen.clear()
            prompt = await client.get_prompt("kid_greet", {"name": "Ada"})
            assert prompt.messages[0].content["text"] == "Hello Ada"
            assert seen == ["parent kid_greet", "child-1 greet", "child-2 greet",
                            "child-1 done dict"]
            seen.clear()
            assert (await client.read_resource("c://city/Oslo")).text == "rain in Oslo"
            assert seen == ["parent c://city/Oslo", "child-1 c://city/Oslo",
                            "child-2 c://city/Oslo", "child-1 done dict"]

    asyncio.run(go())


@pytest.mark.parametrize("protocol", ERAS)
def test_a_childs_refusing_middleware_is_honoured(protocol: str) -> None:
    parent, seen = audited()

    async def go() -> None:
        async with Client(parent, protocol=protocol) as client:
            seen.clear()
            with pytest.raises(rondo.McpError, match="the child's middleware says no") as caught:
                await client.call_tool("kid_secret")
            assert caught.value.code == -32001
            assert seen == ["parent kid_secret", "child-1 secret", "child-2 secret"]

    asyncio.run(go())


def test_a_parent_without_children_middleware_gets_no_wrap() -> None:
    parent, _, _ = build()
    assert "dev.rondo/gateway-child-middleware" not in parent.extensions
    assert parent.core.express  # the fast lane stays on


def tasks_child(tasks: Any) -> rondo.Server:
    child = rondo.Server("jobs")
    if tasks is not None:
        child.extension(tasks)

    @child.tool(task="required")
    async def slow(n: int, ctx: rondo.Context) -> str:
        """A task-run tool."""
        await ctx.start_task("starting")
        await asyncio.sleep(0)
        return f"done {n}"

    return child


def test_a_mounted_task_tool_runs_as_a_task_through_a_plain_parent() -> None:
    from rondo.tasks import Tasks
    from tests.helpers.tasks_helpers import TASKS, Peer

    tasks = Tasks(ttl_ms=12_345)  # a setting of the child's own, to tell its instance apart
    parent = rondo.Server("plain")
    mount(parent, tasks_child(tasks), namespace="jobs")
    assert parent.extensions[TASKS] is tasks  # carried at mount time, not a default

    async def go() -> None:
        async with parent.started():
            peer = Peer(parent)
            caps = (await peer.result("server/discover"))["capabilities"]
            assert caps["extensions"] == {TASKS: {}}
            made = await peer.tool("jobs_slow", {"n": 7})
            assert made["resultType"] == "task" and made["ttlMs"] == 12_345
            done = await peer.until(made["taskId"])
            assert done["status"] == "completed"
            assert done["result"]["content"] == [{"type": "text", "text": "done 7"}]

    asyncio.run(go())


def test_a_mounted_task_tool_runs_synchronously_for_a_legacy_client() -> None:
    from rondo.tasks import Tasks

    parent = rondo.Server("plain")
    mount(parent, tasks_child(Tasks()), namespace="jobs")

    async def go() -> None:
        async with Client(parent, protocol="2025-11-25") as client:
            assert (await client.call_tool("jobs_slow", {"n": 2})).text == "done 2"

    asyncio.run(go())


def test_tool_option_extensions_the_parent_has_as_another_instance_are_refused() -> None:
    from rondo.tasks import Tasks
    from tests.helpers.tasks_helpers import TASKS

    parent = rondo.Server("p")
    mine = parent.extension(Tasks())
    with pytest.raises(ValueError, match="each install their own 'io.modelcontextprotocol/tasks'"):
        mount(parent, tasks_child(Tasks()), namespace="jobs")
    assert "jobs_slow" not in parent.tools  # refused before anything was brought in
    mount(parent, tasks_child(mine), namespace="same")  # one instance on both: fine
    mount(parent, tasks_child(None), namespace="bare")  # none on the child: the parent's serves
    assert parent.extensions[TASKS] is mine


def test_a_childs_middleware_sees_the_task_answer_when_tasks_are_carried() -> None:
    from rondo.tasks import Tasks
    from tests.helpers.tasks_helpers import Peer

    seen: list[str] = []

    async def audit(request: Any, call_next: Any) -> Any:
        result = await call_next(request)
        seen.append(f"{request.name} -> {result.get('resultType')}")
        return result

    child = tasks_child(Tasks())
    child.middleware = (audit,)
    parent = rondo.Server("plain")
    mount(parent, child, namespace="jobs")

    async def go() -> None:
        async with parent.started():
            peer = Peer(parent)
            made = await peer.tool("jobs_slow", {"n": 1})
            assert (await peer.until(made["taskId"]))["status"] == "completed"

    asyncio.run(go())
    # Outside the task, as on the child served alone: it saw the call answered with the task,
    # then each tasks/get of it (a task its tool made: no name, no resultType).
    assert seen[0] == "slow -> task"
    assert len(seen) >= 2 and set(seen[1:]) == {"None -> None"}
