"""What a mount carries of its child's extensions (gateway/carry.py): each by the rule it
declares on the seam (merged under the namespace, or shared as one instance), on both eras;
removed again by unmount(); picked up when installed on the child after mounting."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import rondo
from rondo import elicit
from rondo.client import Client, ElicitRequest, ElicitResult
from rondo.gateway import mount
from rondo.state import StatePolicy
from rondo.userstate import MemoryStore, UserState
from tests.helpers.asgi_body import read_body, replaying
from tests.helpers.gateway_upstream import Recorder, served
from tests.helpers.subscribing import Heard, subscribed, touch_until_heard

ERAS = ("2026-07-28", "2025-11-25")
TASKS = "io.modelcontextprotocol/tasks"


def by_name(ctx: Any) -> str | None:
    """Who the caller is, for these tests: the client's name (a real server uses rondo.auth)."""
    return (ctx.client_info or {}).get("name")


def task_upstream(label: str) -> rondo.Server:
    return task_tools(rondo.Server(f"{label}-upstream"), label)


def task_tools(up: rondo.Server, label: str) -> rondo.Server:
    """`slow` and `delete` (a task asking a question) on `up`, answering under `label`."""

    @up.tool(task="optional")
    async def slow(seconds: float, ctx: rondo.Context) -> str:
        """Sleeps as a task."""
        await ctx.start_task("sleeping")
        await asyncio.sleep(seconds)
        return f"{label} slept {seconds:g}"

    @up.tool(task="optional")
    async def delete(filename: str, ctx: rondo.Context) -> str:
        """A task that asks for confirmation while it runs (answered with tasks/update)."""
        await ctx.start_task(f"about to delete {filename}")
        answer = await ctx.ask("confirm", CONFIRM)
        return f"{label} deleted {filename}" if answer.content["confirm"] else "kept"

    return up


CONFIRM = elicit.form("Delete it?", {"type": "object", "properties": {
    "confirm": {"type": "boolean"}}, "required": ["confirm"]})


def yes(request: ElicitRequest) -> Any:
    return ElicitResult("accept", {"confirm": True})


def upstream_posts(recorder: Recorder, method: str) -> list[dict[str, str]]:
    return [post for post in recorder.posts if post.get("mcp-method") == method]


@contextmanager
def east_and_west() -> Iterator[tuple[str, Recorder, Recorder]]:
    """Two task upstreams on loopback, `east` and `west`, each mounted as a proxy under its
    label on a parent whose callers are told apart by client name; the parent served: its URL
    and the two upstreams' recorders."""
    east, west = Recorder(task_upstream("east").asgi()), Recorder(task_upstream("west").asgi())
    with served(east) as (east_url, _), served(west) as (west_url, _):
        parent = rondo.Server("parent", state=StatePolicy(principal=by_name))
        mount(parent, rondo.proxy(east_url), namespace="east")
        mount(parent, rondo.proxy(west_url), namespace="west")
        with served(parent.asgi()) as (url, _):
            yield url, east, west


# -- 1. a mounted proxy relays its upstream's tasks -------------------------------------------


def test_mounted_proxies_relay_tasks_each_to_its_own_upstream() -> None:
    with east_and_west() as (url, east, west):

        async def go() -> None:
            async with Client(url, name="alice", tasks=True, on_elicit=yes) as client:
                found = await client.discover()
                assert TASKS in found.capabilities["extensions"]
                ids = {}
                for side in ("east", "west"):
                    raw = await client.call_raw(f"{side}_slow", {"seconds": 0.1})
                    assert raw["resultType"] == "task"
                    ids[side] = raw["taskId"]
                for side, task_id in ids.items():
                    handle = client.task(task_id)
                    assert (await handle.wait()).text == f"{side} slept 0.1"
                    assert handle.last["taskId"] == task_id
                before = len(upstream_posts(east, "tasks/get"))
                head, _up, kid, mac = ids["east"].split(".")
                with pytest.raises(rondo.McpError, match="Task not found"):
                    await client.task(f"{head}.{_up}x.{kid}.{mac}").get()
                assert len(upstream_posts(east, "tasks/get")) == before
                await client.task(ids["west"]).cancel()  # a finished task: still routed
                # The task's question is answered with tasks/update, at its own upstream.
                done = await client.call_tool("west_delete", {"filename": "a.txt"})
                assert done.text == "west deleted a.txt"
            # 2025-11-25: no tasks on that era; the mounted proxy's tool answers in line.
            async with Client(url, name="alice", protocol="2025-11-25") as legacy:
                assert (await legacy.call_tool("east_slow", {"seconds": 0.01})).text \
                    == "east slept 0.01"

        asyncio.run(go())
    # each upstream saw only its own task's polls, under its own id
    east_gets, west_gets = upstream_posts(east, "tasks/get"), upstream_posts(west, "tasks/get")
    assert east_gets and west_gets
    assert all(not p["mcp-name"].startswith("t2.") for p in east_gets + west_gets)
    assert {p["mcp-name"] for p in east_gets}.isdisjoint({p["mcp-name"] for p in west_gets})
    assert len(upstream_posts(west, "tasks/cancel")) == 1
    assert not upstream_posts(east, "tasks/cancel")
    assert upstream_posts(west, "tasks/update") and not upstream_posts(east, "tasks/update")


# -- 3. per-user state ---------------------------------------------------------------------------


def user_child(name: str, store: MemoryStore) -> rondo.Server:
    child = rondo.Server(name, state=StatePolicy(principal=by_name))
    child.extension(UserState(store))

    @child.tool
    async def remember(value: str, ctx: rondo.Context) -> str:
        """Keeps a value for the caller."""
        before = await ctx.user_state.get("v")
        await ctx.user_state.set("v", value)
        return f"{name}: {before}"

    return child


@pytest.mark.parametrize("protocol", ERAS)
def test_user_state_of_a_mounted_child_is_its_own(protocol: str) -> None:
    parent = rondo.Server("parent", state=StatePolicy(principal=by_name))
    own, one, two = MemoryStore(), MemoryStore(), MemoryStore()
    parent.extension(UserState(own))

    @parent.tool
    async def mine(ctx: rondo.Context) -> str:
        """The parent's own state."""
        return str(await ctx.user_state.get("v"))

    async def go() -> None:
        async with Client(parent, name="alice", protocol=protocol) as alice, \
                Client(parent, name="bob", protocol=protocol) as bob:
            assert (await alice.call_tool("a_remember", {"value": "x"})).text == "a: None"
            assert (await alice.call_tool("a_remember", {"value": "y"})).text == "a: x"
            assert (await bob.call_tool("a_remember", {"value": "z"})).text == "a: None"
            assert (await alice.call_tool("b_remember", {"value": "q"})).text == "b: None"
            assert (await alice.call_tool("mine")).text == "None"  # the parent's own store
        async with Client(children["a"], name="alice", protocol=protocol) as alone:
            # served alone, child a finds alice's value in its own store
            assert (await alone.call_tool("remember", {"value": "w"})).text == "a: y"

    children = {"a": user_child("a", one), "b": user_child("b", two)}
    mounts = [mount(parent, children[name], namespace=name) for name in ("a", "b")]
    asyncio.run(go())
    for made in mounts:
        made.unmount()
    own_call = parent.context_calls["user_state"]  # the parent's own again, not a router
    assert getattr(own_call, "__self__", None) is parent.extensions["dev.rondo/user-state"]


@pytest.mark.parametrize("protocol", ERAS)
def test_user_state_installed_on_the_child_only_serves_it_in_the_parent(protocol: str) -> None:
    parent = rondo.Server("parent", state=StatePolicy(principal=by_name))
    child = user_child("a", MemoryStore())
    made = mount(parent, child, namespace="a")
    assert "dev.rondo/user-state" in parent.extensions

    async def go() -> None:
        async with Client(parent, name="alice", protocol=protocol) as alice:
            assert (await alice.call_tool("a_remember", {"value": "x"})).text == "a: None"

        async with Client(child, name="alice", protocol=protocol) as alone:
            assert (await alone.call_tool("remember", {"value": "y"})).text == "a: x"

    asyncio.run(go())
    made.unmount()  # what the mount installed goes with it, its context-call router too
    assert "dev.rondo/user-state" not in parent.extensions
    assert "user_state" not in parent.context_calls


# -- 4. unmount, and extensions installed after mounting -----------------------------------------


def task_child() -> rondo.Server:
    from rondo.tasks import Tasks

    child = rondo.Server("worker")
    child.extension(Tasks())

    @child.tool(task="optional")
    async def work(ctx: rondo.Context) -> str:
        """Runs as a task where it can."""
        await ctx.start_task("working")
        return "worked"

    return child


@pytest.mark.parametrize("protocol", ERAS)
def test_unmount_removes_a_carried_extension_but_not_the_parents_own(protocol: str) -> None:
    from rondo.tasks import Tasks

    parent = rondo.Server("parent")
    child = task_child()
    made = mount(parent, child, namespace="w")
    assert parent.extensions[TASKS] is child.extensions[TASKS]

    async def call(server: rondo.Server, name: str) -> dict[str, Any]:
        async with Client(server, protocol=protocol, tasks=True) as client:
            return await client.call_raw(name)

    first = asyncio.run(call(parent, "w_work"))
    assert first.get("resultType") == ("task" if protocol == "2026-07-28" else None)
    made.unmount()
    assert TASKS not in parent.extensions
    with pytest.raises(rondo.McpError, match="Method not found") as caught:
        asyncio.run(_task_get(parent))  # the rows left with the extension
    assert caught.value.code == -32601
    # The same instance on the parent before mounting: it stays after unmount.
    shared = Tasks()
    owner = rondo.Server("owner")
    owner.extension(shared)
    again = rondo.Server("worker2")
    again.extension(shared)
    mount(owner, again, namespace="w").unmount()
    assert owner.extensions[TASKS] is shared


async def _task_get(parent: rondo.Server) -> Any:
    async with Client(parent, protocol="2026-07-28", tasks=True) as client:
        return await client.request("tasks/get", {"taskId": "nope"})


@pytest.mark.parametrize("protocol", ERAS)
def test_an_extension_installed_on_the_child_after_mounting_is_carried(protocol: str) -> None:
    parent = rondo.Server("parent", state=StatePolicy(principal=by_name))
    child = rondo.Server("late", state=StatePolicy(principal=by_name))

    @child.tool
    async def count(ctx: rondo.Context) -> str:
        """Counts the caller's calls."""
        seen = int(await ctx.user_state.get("n") or 0) + 1
        await ctx.user_state.set("n", seen)
        return str(seen)

    made = mount(parent, child, namespace="late")
    child.extension(UserState(MemoryStore()))  # after mounting

    async def go() -> None:
        async with Client(parent, name="alice", protocol=protocol) as alice:
            assert (await alice.call_tool("late_count")).text == "1"
            assert (await alice.call_tool("late_count")).text == "2"

    asyncio.run(go())
    child.remove_extension("dev.rondo/user-state")  # and removed from it: gone from the parent
    assert "dev.rondo/user-state" not in parent.extensions
    assert "user_state" not in parent.context_calls
    made.unmount()


def test_a_conflicting_extension_installed_on_the_child_later_is_refused() -> None:
    from rondo.tasks import Tasks

    parent = rondo.Server("parent")
    parent.extension(Tasks())
    child = rondo.Server("late")
    mount(parent, child, namespace="late")
    with pytest.raises(ValueError, match="each install their own 'io.modelcontextprotocol/tasks'"):
        child.extension(Tasks())
    assert TASKS not in child.extensions  # refused whole: the child is as it was


# -- 2. skills and events ------------------------------------------------------------------------


def skills_child(name: str, body: str) -> rondo.Server:
    from rondo.skills import Skills, declare

    child = rondo.Server(name)
    child.extension(Skills(skills=[declare("guide", f"The {name} guide.", body,
                                           files={"notes.md": f"{name} notes"})]))
    return child


async def _skills_view(client: Client) -> dict[str, Any]:
    listed = await client.request("skills/list", {})
    resources = (await client.request("resources/list", {}))["resources"]
    return {"skills": [s["uri"] for s in listed["skills"]],
            "names": [s["frontmatter"]["name"] for s in listed["skills"]],
            "resources": sorted(r["uri"] for r in resources)}


@pytest.mark.parametrize("protocol", ERAS)
def test_skills_of_mounted_children_are_served_under_their_namespaces(protocol: str) -> None:
    parent = rondo.Server("parent")
    one, two = skills_child("one", "Use one."), skills_child("two", "Use two.")
    mount(parent, one, namespace="a")
    made = mount(parent, two, namespace="b")

    async def go() -> None:
        async with Client(parent, protocol=protocol) as client:
            caps = (client.server_capabilities if protocol == "2025-11-25"
                    else (await client.discover()).capabilities)
            assert "io.modelcontextprotocol/skills" in caps["extensions"]
            view = await _skills_view(client)
            assert view["skills"] == ["skill://a/guide/SKILL.md", "skill://b/guide/SKILL.md"]
            assert view["names"] == ["guide", "guide"]  # the name is the last path segment
            assert view["resources"] == ["skill://a/guide/SKILL.md", "skill://b/guide/SKILL.md"]
            read = await client.request("resources/read", {"uri": "skill://b/guide/SKILL.md"})
            assert "Use two." in read["contents"][0]["text"]
            notes = await client.request("resources/read", {"uri": "skill://a/guide/notes.md"})
            assert notes["contents"][0]["text"] == "one notes"
            got = await client.request("skills/get", {"uri": "skill://a/guide/SKILL.md"})
            assert got["skill"]["resources"][1]["uri"] == "skill://a/guide/notes.md"
            with pytest.raises(rondo.McpError, match="not found|Resource"):
                await client.request("resources/read", {"uri": "skill://guide/SKILL.md"})
        made.unmount()
        async with Client(parent, protocol=protocol) as client:
            view = await _skills_view(client)
            assert view["skills"] == view["resources"] == ["skill://a/guide/SKILL.md"]

    asyncio.run(go())


def test_a_skill_path_both_would_serve_is_refused_at_mount() -> None:
    from rondo.skills import SkillError, Skills, declare

    parent = rondo.Server("parent")
    parent.extension(Skills(skills=[declare("guide", "Mine.", "Mine.", path="a/guide")]))
    with pytest.raises(SkillError, match="skill path 'a/guide'.*already served"):
        mount(parent, skills_child("one", "x"), namespace="a")
    assert "a_guide" not in parent.tools and not any(
        u.startswith("skill://guide") for u in parent.resources)
    mount(parent, skills_child("one", "x"), namespace="other")  # a free namespace merges


@pytest.mark.parametrize("protocol", ERAS)
def test_a_mounted_childs_refreshed_skills_follow(protocol: str, tmp_path: Any) -> None:
    from rondo.skills import Skills

    (tmp_path / "howto").mkdir()
    manifest = tmp_path / "howto" / "SKILL.md"
    manifest.write_text("---\nname: howto\ndescription: First.\n---\nFirst.\n")
    child = rondo.Server("docs")
    skills = child.extension(Skills(tmp_path))
    parent = rondo.Server("parent")
    mount(parent, child, namespace="d")
    manifest.write_text("---\nname: howto\ndescription: Second.\n---\nSecond.\n")
    assert skills.refresh()

    async def go() -> None:
        async with Client(parent, protocol=protocol) as client:
            read = await client.request("resources/read", {"uri": "skill://d/howto/SKILL.md"})
            assert "Second." in read["contents"][0]["text"]
            listed = await client.request("resources/list", {})
            assert [r["uri"] for r in listed["resources"]] == ["skill://d/howto/SKILL.md"]

    asyncio.run(go())


def events_child(name: str) -> rondo.Server:
    from rondo.events import Events

    child = rondo.Server(name)
    events = child.extension(Events())
    events.event("order.shipped", description=f"{name} shipped an order",
                 payload_schema={"type": "object", "properties": {"id": {"type": "string"}}})
    return child


@pytest.mark.parametrize("protocol", ERAS)
def test_event_types_of_mounted_children_are_served_under_their_namespaces(
        protocol: str) -> None:
    parent = rondo.Server("parent")
    east, west = events_child("east"), events_child("west")
    mount(parent, east, namespace="east")
    made = mount(parent, west, namespace="west")

    async def go() -> None:
        async with Client(parent, protocol=protocol) as client:
            listed = (await client.request("events/list", {}))["events"]
            assert [e["name"] for e in listed] == ["east_order.shipped", "west_order.shipped"]
            assert listed[1]["description"] == "west shipped an order"
            start = {}
            for side in ("east", "west"):
                head = await client.request("events/poll", {"name": f"{side}_order.shipped",
                                                            "cursor": None})
                start[side] = head["cursor"]
            await east.emit("order.shipped", {"id": "e1"})  # the child emits as it would alone
            await parent.emit("west_order.shipped", {"id": "w1"})  # or the parent, by its name
            for side, wanted in (("east", "e1"), ("west", "w1")):
                page = await client.request("events/poll", {"name": f"{side}_order.shipped",
                                                            "cursor": start[side]})
                assert [(e["name"], e["data"]["id"]) for e in page["events"]] \
                    == [(f"{side}_order.shipped", wanted)]
            with pytest.raises(rondo.McpError, match="Unknown event: order.shipped"):
                await client.request("events/poll", {"name": "order.shipped", "cursor": None})
        made.unmount()
        async with Client(parent, protocol=protocol) as client:
            listed = (await client.request("events/list", {}))["events"]
            assert [e["name"] for e in listed] == ["east_order.shipped"]

    asyncio.run(go())


def test_an_event_type_both_would_serve_is_refused_at_mount() -> None:
    from rondo.events import Events

    parent = rondo.Server("parent")
    own = parent.extension(Events())
    own.event("east_order.shipped", description="the parent's own")
    with pytest.raises(ValueError, match="event type 'east_order.shipped'.*already served"):
        mount(parent, events_child("east"), namespace="east")
    assert parent.extensions["io.modelcontextprotocol/events"] is own and not own.members


# -- 3. MCP Apps -----------------------------------------------------------------------------------

PAGE = "<!doctype html><html><head><title>t</title></head><body><p>view</p></body></html>"


def apps_child(hide: bool = True) -> rondo.Server:
    from rondo.apps import Apps

    child = rondo.Server("shop")
    apps = child.extension(Apps(hide_app_only=hide))
    table = apps.view("ui://shop/orders", html=PAGE, title="Orders")

    @apps.tool(view=table)
    def orders() -> str:
        """List orders."""
        return "two orders"

    @apps.tool(view=table, visibility=["app"])
    def refresh() -> str:
        """The view's button."""
        return "refreshed"

    return child


@pytest.mark.parametrize("protocol", ERAS)
def test_a_mounted_childs_views_and_links_are_served_by_the_parent(protocol: str) -> None:
    from rondo.apps import EXTENSION, LEGACY_RESOURCE_URI, MIME_TYPE
    from rondo.apps.client import AppsClient

    parent = rondo.Server("parent")

    @parent.tool
    def plain() -> str:
        """The parent's own."""
        return "plain"

    made = mount(parent, apps_child(), namespace="shop")

    async def go() -> None:
        async with Client(parent, protocol=protocol, extensions=[AppsClient()]) as client:
            caps = (client.server_capabilities if protocol == "2025-11-25"
                    else (await client.discover()).capabilities)
            assert EXTENSION in caps["extensions"]
            tools = {t.name: t for t in await client.list_tools()}
            assert sorted(tools) == ["plain", "shop_orders", "shop_refresh"]
            meta = tools["shop_orders"].meta or {}
            assert meta["ui"]["resourceUri"] == meta[LEGACY_RESOURCE_URI] == "ui://shop/orders"
            read = await client.request("resources/read", {"uri": "ui://shop/orders"})
            assert read["contents"][0]["mimeType"] == MIME_TYPE
            assert read["contents"][0]["text"] == PAGE
            assert (await client.call_tool("shop_refresh")).text == "refreshed"
        async with Client(parent, protocol=protocol) as plain_client:  # no apps support
            names = sorted(t.name for t in await plain_client.list_tools())
            assert names == ["plain", "shop_orders"]  # the child's hide_app_only holds
        made.unmount()
        assert EXTENSION not in parent.extensions

    asyncio.run(go())


def test_apps_whose_hide_app_only_differ_are_refused_at_mount() -> None:
    from rondo.apps import Apps, AppsError

    parent = rondo.Server("parent")
    parent.extension(Apps())
    with pytest.raises(AppsError, match="hide_app_only=True.*must agree"):
        mount(parent, apps_child(hide=True), namespace="shop")
    assert "shop_orders" not in parent.tools


# -- the proxy's other wraps, chained: resource watch ---------------------------------------------


def notes_upstream(uri: str) -> rondo.Server:
    up = rondo.Server("notes")

    @up.resource(uri)
    def note() -> str:
        return "note"

    @up.tool()
    def touch() -> str:
        """Says the note changed."""
        up.notify_resource_updated(uri)
        return "touched"

    return up


@pytest.mark.parametrize("protocol", ERAS)
def test_a_subscription_to_a_mounted_proxys_uri_subscribes_at_that_upstream_only(
        protocol: str) -> None:
    one, two = Bodies(notes_upstream("note://a").asgi()), Bodies(
        notes_upstream("note://b").asgi())
    with served(one) as (one_url, _), served(two) as (two_url, _):
        parent = rondo.Server("parent")
        for name, url in (("one", one_url), ("two", two_url)):
            mount(parent, rondo.proxy(url, upstream_protocol="2025-11-25", timeout=10.0),
                  namespace=name)

        async def go() -> None:
            async with parent.started(), \
                    subscribed(parent, protocol, "note://a") as (client, heard):
                await _touched(client, heard)

        asyncio.run(go())
    assert one.saw("resources/subscribe") and not two.saw("resources/subscribe")


class Bodies:
    """ASGI wrapper: the body of every POST that reached the app (a 2025-11-25 request names
    its method in the body only)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.bodies: list[bytes] = []

    def saw(self, method: str) -> bool:
        return any(f'"method":"{method}"'.encode() in b.replace(b" ", b"") for b in self.bodies)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = await read_body(receive)
        self.bodies.append(body)
        await self.app(scope, replaying(body, receive), send)


async def _touched(client: Client, heard: Heard) -> None:
    async def touch() -> None:
        assert (await client.call_tool("one_touch")).text == "touched"

    got = await touch_until_heard(
        heard, touch, lambda note: note.get("method") == "notifications/resources/updated")
    assert got["params"]["uri"] == "note://a"


@pytest.mark.parametrize("protocol", ERAS)
def test_a_task_tool_added_to_the_child_while_the_parent_serves_runs_as_a_task(
        protocol: str) -> None:
    parent, child = rondo.Server("parent"), rondo.Server("child")

    @child.tool
    def first() -> str:
        """No task."""
        return "first"

    mount(parent, child, namespace="c")

    async def go() -> None:
        async with Client(parent, protocol=protocol, tasks=True) as client:
            assert (await client.call_tool("c_first")).text == "first"  # serving now
            assert TASKS not in parent.extensions

            @child.tool(task="optional")
            async def later(ctx: rondo.Context) -> str:
                """Added while the parent serves."""
                await ctx.start_task("working")
                return "later"

            assert TASKS in parent.extensions  # the default, installed as for its own
            raw = await client.call_raw("c_later")
            if protocol == "2026-07-28":
                assert raw["resultType"] == "task"
                assert (await client.task(raw["taskId"]).wait()).text == "later"
            else:
                assert raw["content"][0]["text"] == "later"

    asyncio.run(go())


# -- an OpenAPI server's schema translator, shared ----------------------------------------------

PETS = {
    "openapi": "3.0.3", "info": {"title": "Pets", "version": "1"},
    "paths": {"/pets/{id}": {"get": {"operationId": "get", "parameters": [
        {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}],
        "responses": {"200": {"description": "", "content": {"application/json": {
            "schema": {"type": "object"}}}}}}}},
}


@pytest.mark.parametrize("protocol", ERAS)
def test_a_mounted_openapi_servers_tools_are_listed_with_their_schemas(protocol: str) -> None:
    import httpx

    from rondo.openapi import from_openapi

    client = httpx.AsyncClient(base_url="https://pets.example", transport=httpx.MockTransport(
        lambda request: httpx.Response(200, json={"name": "Rex"})))
    pets = from_openapi(PETS, client)
    parent = rondo.Server("parent")
    mount(parent, pets, namespace="pets")

    async def go() -> None:
        async with Client(parent, protocol=protocol) as mcp:
            [tool] = await mcp.list_tools()
            assert tool.name == "pets_get"
            assert tool.input_schema["properties"]["id"]["type"] == "integer"
            assert tool.input_schema["required"] == ["id"]

    asyncio.run(go())

def test_mounted_proxies_relay_task_notifications_each_from_its_own_upstream() -> None:
    """A listen stream on the parent naming tasks of two mounted proxies: each id is followed
    on its own upstream's stream and its `notifications/tasks` come under the id as held."""
    from tests.helpers.wire_schema import validate

    with east_and_west() as (url, _, _):

        async def go() -> None:
            async with Client(url, name="alice", tasks=True) as client:
                ids = {side: (await client.call_raw(f"{side}_slow", {"seconds": 0.3})
                              )["taskId"] for side in ("east", "west")}
                async with client.listen(task_ids=[ids["east"], ids["west"]]) as sub:
                    assert sorted(sub.acknowledged["taskIds"]) == sorted(ids.values())
                    done: dict[str, str] = {}
                    deadline = asyncio.get_running_loop().time() + 10
                    while len(done) < 2:
                        note = await asyncio.wait_for(
                            sub.__anext__(), deadline - asyncio.get_running_loop().time())
                        validate({"jsonrpc": "2.0", **note}, era="2026-07-28")
                        params = note["params"]
                        assert params["taskId"] in ids.values()
                        if params["status"] == "completed":
                            done[params["taskId"]] = params["result"]["content"][0]["text"]
                assert done == {ids["east"]: "east slept 0.3", ids["west"]: "west slept 0.3"}

        asyncio.run(go())


# -- a proxy's relayed tasks beside rondo's own tasks on one parent ----------------------------


@pytest.mark.parametrize(("tasks_of", "proxy"), [
    ("child", "last"),    # the child's tasks extension, shared, then adopted by the proxies' hub
    ("child", "first"),   # the child's tasks extension joining the hub already there
    ("parent", "last"),   # the parent's own, adopted, and given back at unmount
    ("default", "first"),  # nobody's: the registered default, made by the hub when needed
])
def test_a_parent_runs_its_own_and_a_childs_tasks_beside_a_mounted_proxys(
        tasks_of: str, proxy: str) -> None:
    from rondo.tasks import Tasks

    east = Recorder(task_upstream("east").asgi())
    with served(east) as (east_url, _):
        parent = task_tools(rondo.Server("parent", state=StatePolicy(principal=by_name)), "home")
        child = task_tools(rondo.Server("kid"), "kid")
        own = Tasks()
        if tasks_of == "child":
            child.extension(own)
        elif tasks_of == "parent":
            parent.extension(own)
        front = rondo.proxy(east_url)
        if proxy == "first":
            proxied = mount(parent, front, namespace="east")
        mount(parent, child, namespace="kid")
        if proxy == "last":
            proxied = mount(parent, front, namespace="east")
        names = {"home": "slow", "kid": "kid_slow", "east": "east_slow"}
        with served(parent.asgi()) as (url, _):

            async def go() -> None:
                loop = asyncio.get_running_loop()
                async with Client(url, name="alice", tasks=True, on_elicit=yes) as client:
                    found = await client.discover()
                    assert TASKS in found.capabilities["extensions"]
                    ids = {}
                    for label, tool in names.items():
                        raw = await client.call_raw(tool, {"seconds": 0.3})
                        assert raw["resultType"] == "task", label
                        ids[label] = raw["taskId"]
                    assert ids["east"].startswith("t2.") and not ids["home"].startswith("t2.")
                    # one listen stream follows all three, each from where it runs
                    async with client.listen(task_ids=list(ids.values())) as sub:
                        assert sorted(sub.acknowledged["taskIds"]) == sorted(ids.values())
                        done: dict[str, str] = {}
                        deadline = loop.time() + 10
                        while len(done) < 3:
                            note = await asyncio.wait_for(sub.__anext__(),
                                                          deadline - loop.time())
                            params = note["params"]
                            assert params["taskId"] in ids.values()
                            if params["status"] == "completed":
                                done[params["taskId"]] = params["result"]["content"][0]["text"]
                    assert done == {ids[label]: f"{label} slept 0.3" for label in names}
                    for label, task_id in ids.items():  # polled (tasks/get)
                        handle = client.task(task_id)
                        assert (await handle.wait()).text == f"{label} slept 0.3"
                        assert handle.last["taskId"] == task_id
                    # updated: each task's question answered with tasks/update where it runs
                    for label in names:
                        tool = names[label].replace("slow", "delete")
                        raw = await client.call_raw(tool, {"filename": "a.txt"})
                        assert raw["resultType"] == "task"
                        done_text = (await client.task(raw["taskId"]).wait()).text
                        assert done_text == f"{label} deleted a.txt"
                    # cancelled
                    for label, tool in names.items():
                        raw = await client.call_raw(tool, {"seconds": 30})
                        handle = client.task(raw["taskId"])
                        await handle.cancel()
                        deadline = loop.time() + 10
                        while (await handle.get())["status"] != "cancelled":
                            assert loop.time() < deadline, (label, handle.last)
                            await asyncio.sleep(0.05)
                    # a forged proxy id and an unknown id: not found, by either
                    head, up_id, kid, mac = ids["east"].split(".")
                    before = len(upstream_posts(east, "tasks/get"))
                    for bad in (f"{head}.{up_id}x.{kid}.{mac}", "nope"):
                        with pytest.raises(rondo.McpError, match="Task not found"):
                            await client.task(bad).get()
                    assert len(upstream_posts(east, "tasks/get")) == before

            asyncio.run(go())
        assert upstream_posts(east, "tasks/update") and upstream_posts(east, "tasks/cancel")
        proxied.unmount()
        if tasks_of != "default":  # the adopted instance has its own place again
            assert parent.extensions[TASKS] is own


# -- a mount of a mount: the grandchild's middleware and visible= run in the grandparent -------


def nested_servers(log: list[tuple[str, str, Any]]) -> tuple[rondo.Server, rondo.Server,
                                                               rondo.Server]:
    """The grandchild `g` (middleware, a tool and a resource only admins see), the child `c`
    (middleware of its own) and `d`, a sibling with middleware mounted into the parent too."""
    def recorder(label: str) -> Any:
        async def record(request: Any, call_next: Any) -> Any:
            log.append((label, request.method, request.name))
            return await call_next(request)

        return record

    g = rondo.Server("g", middleware=[recorder("g")])
    c = rondo.Server("c", middleware=[recorder("c")])
    d = rondo.Server("d", middleware=[recorder("d")])

    @g.tool
    def secret() -> str:
        """Admins only."""
        return "classified"

    @g.tool(name="open")
    def open_() -> str:
        """Anyone."""
        return "open"

    @g.resource("g://hidden", mime_type="text/plain")
    def hidden() -> str:
        """Admins only."""
        return "hidden"

    @d.tool
    def other() -> str:
        """The sibling's."""
        return "other"

    return g, c, d


def admins_only(who: Any, kind: str, name: str) -> bool:
    return name not in ("secret", "g://hidden") or (who is not None and "admin" in who.scopes)


@pytest.mark.parametrize("protocol", ERAS)
@pytest.mark.parametrize("late", [False, True], ids=["grandchild-first", "grandchild-later"])
@pytest.mark.parametrize("sibling", [False, True], ids=["alone", "beside-d"])
def test_a_mount_of_a_mount_runs_the_grandchilds_middleware_and_visibility(
        protocol: str, late: bool, sibling: bool) -> None:
    from rondo.testing import principal

    log: list[tuple[str, str, Any]] = []
    g, c, d = nested_servers(log)
    parent = rondo.Server("p")
    if sibling:  # the parent then has a child-middleware wrap of its own already
        mount(parent, d, namespace="d")
    theirs = {"d_other"} if sibling else set()
    if not late:
        mount(c, g, namespace="g", visible=admins_only)
    mount(parent, c, namespace="c")
    if late:  # made on the child after the child was mounted
        mount(c, g, namespace="g", visible=admins_only)
    admin, bob = principal("ada", scopes=["admin"]), principal("bob")

    async def go() -> None:
        async with Client(parent, protocol=protocol, auth=admin) as client:
            assert {t.name for t in await client.list_tools()} == {
                "c_g_secret", "c_g_open"} | theirs
            assert "g://hidden" in [r.uri for r in await client.list_resources()]
            log.clear()
            assert (await client.call_tool("c_g_secret")).text == "classified"
            # the child's middleware, then the grandchild's, each under its own name
            assert log == [("c", "tools/call", "g_secret"), ("g", "tools/call", "secret")]
            log.clear()
            assert (await client.read_resource("g://hidden")).text == "hidden"
            assert log == [("c", "resources/read", "g://hidden"),
                           ("g", "resources/read", "g://hidden")]
            if sibling:
                log.clear()
                assert (await client.call_tool("d_other")).text == "other"
                assert log == [("d", "tools/call", "other")]
        async with Client(parent, protocol=protocol, auth=bob) as client:
            assert {t.name for t in await client.list_tools()} == {"c_g_open"} | theirs
            assert "g://hidden" not in [r.uri for r in await client.list_resources()]
            with pytest.raises(rondo.McpError, match="^Unknown tool: ") as caught:
                await client.call_tool("c_g_secret")
            assert caught.value.code == -32602
            log.clear()
            assert (await client.call_tool("c_g_open")).text == "open"
            assert log == [("c", "tools/call", "g_open"), ("g", "tools/call", "open")]

    asyncio.run(go())


def test_a_parents_tasks_extension_installed_after_a_proxy_is_mounted_is_refused() -> None:
    """The limit docs/gateway.md states: the relays' hub adopts a tasks extension the parent
    had before the proxy came, not one installed on the parent afterwards."""
    from rondo.tasks import Tasks

    parent = rondo.Server("parent")
    mount(parent, rondo.proxy("http://127.0.0.1:9/mcp", must_connect=False), namespace="east")
    with pytest.raises(ValueError, match="'io.modelcontextprotocol/tasks' is installed twice"):
        parent.extension(Tasks())
    assert type(parent.extensions[TASKS]).__name__ == "TaskRelays"  # the hub, untouched


# -- a child's middleware around the completions the parent routes to it ----------------------


@pytest.mark.parametrize("protocol", ERAS)
def test_a_childs_middleware_runs_around_completions_routed_to_it(protocol: str) -> None:
    log: list[tuple[str, str, Any]] = []

    def recorder(label: str) -> Any:
        async def record(request: Any, call_next: Any) -> Any:
            ref = request.params.get("ref") or {}
            log.append((label, request.method, ref.get("name") or ref.get("uri")))
            if label == "g" and (request.params.get("argument") or {}).get("value") == "no":
                raise rondo.McpError(-32602, f"{label} refuses it")
            return await call_next(request)

        return record

    g = rondo.Server("g", middleware=[recorder("g")])
    c = rondo.Server("c", middleware=[recorder("c")])
    parent = rondo.Server("p")

    @g.prompt
    def topic(name: str) -> str:
        """A grandchild's prompt."""
        return name

    @c.prompt
    def city(name: str) -> str:
        """A child's prompt."""
        return name

    @c.resource("weather://{city}", mime_type="text/plain")
    def weather(city: str) -> str:
        """A child's template."""
        return city

    @parent.prompt
    def own(name: str) -> str:
        """The parent's own."""
        return name

    @g.completion
    def g_values(ref: Any, argument: Any, context: Any) -> list[str]:
        return ["g:" + str(ref.get("name"))]

    @c.completion
    def c_values(ref: Any, argument: Any, context: Any) -> list[str]:
        return ["c:" + str(ref.get("name") or ref.get("uri"))]

    @parent.completion
    def p_values(ref: Any, argument: Any, context: Any) -> list[str]:
        return ["p:" + str(ref.get("name"))]

    mount(c, g, namespace="g")
    mount(parent, c, namespace="c")

    async def go() -> None:
        async with Client(parent, protocol=protocol) as client:
            async def complete(ref: dict[str, str], value: str = "o") -> list[str]:
                return list((await client.complete(ref, "name", value)).values)

            assert await complete({"type": "ref/prompt", "name": "c_city"}) == ["c:city"]
            assert log == [("c", "completion/complete", "city")]
            log.clear()
            assert await complete({"type": "ref/resource", "uri": "weather://{city}"}) \
                == ["c:weather://{city}"]
            assert log == [("c", "completion/complete", "weather://{city}")]
            log.clear()
            assert await complete({"type": "ref/prompt", "name": "c_g_topic"}) == ["g:topic"]
            assert log == [("c", "completion/complete", "g_topic"),
                           ("g", "completion/complete", "topic")]
            log.clear()
            assert await complete({"type": "ref/prompt", "name": "own"}) == ["p:own"]
            assert log == []  # the parent's own completion passes no child's middleware
            with pytest.raises(rondo.McpError, match="^g refuses it$"):
                await complete({"type": "ref/prompt", "name": "c_g_topic"}, "no")
            assert log == [("c", "completion/complete", "g_topic"),
                           ("g", "completion/complete", "topic")]

    asyncio.run(go())


# -- a child's middleware around tasks/* of the tasks its tools made ---------------------------


@pytest.mark.parametrize("proxy", [False, True], ids=["own-tasks", "beside-a-proxy"])
def test_a_childs_middleware_runs_around_the_tasks_its_tools_made(proxy: bool) -> None:
    import contextlib

    log: list[tuple[str, Any]] = []
    refuse: set[str] = set()

    async def record(request: Any, call_next: Any) -> Any:
        log.append((request.method, request.params.get("taskId")))
        if request.method in refuse:
            raise rondo.McpError(-32602, "kid refuses it")
        return await call_next(request)

    child = task_tools(rondo.Server("kid", middleware=[record]), "kid")
    parent = task_tools(rondo.Server("parent", state=StatePolicy(principal=by_name)), "home")
    mount(parent, child, namespace="kid")
    with contextlib.ExitStack() as stack:
        if proxy:  # the relays' hub then answers tasks/* and says which tool made a task
            east_url, _ = stack.enter_context(served(task_upstream("east").asgi()))
            mount(parent, rondo.proxy(east_url), namespace="east")
        url, _ = stack.enter_context(served(parent.asgi()))

        async def go() -> None:
            loop = asyncio.get_running_loop()
            async with Client(url, name="alice", tasks=True, on_elicit=yes) as client:
                ids = {tool: (await client.call_raw(tool, {"seconds": 0.2}))["taskId"]
                       for tool in ["kid_slow", "slow"] + (["east_slow"] if proxy else [])}
                log.clear()
                assert (await client.task(ids["kid_slow"]).wait()).text == "kid slept 0.2"
                assert log and set(log) == {("tasks/get", ids["kid_slow"])}
                log.clear()
                assert (await client.task(ids["slow"]).wait()).text == "home slept 0.2"
                if proxy:
                    assert (await client.task(ids["east_slow"]).wait()).text == "east slept 0.2"
                assert log == []  # the parent's own task, a proxy's: not the child's
                # tasks/update of the child's task passes its middleware
                raw = await client.call_raw("kid_delete", {"filename": "a.txt"})
                log.clear()
                assert (await client.task(raw["taskId"]).wait()).text == "kid deleted a.txt"
                assert ("tasks/update", raw["taskId"]) in log
                # tasks/cancel too, and its refusal is the client's answer
                raw = await client.call_raw("kid_slow", {"seconds": 30})
                refuse.add("tasks/cancel")
                with pytest.raises(rondo.McpError, match="^kid refuses it$"):
                    await client.task(raw["taskId"]).cancel()
                refuse.clear()
                log.clear()
                await client.task(raw["taskId"]).cancel()
                assert log == [("tasks/cancel", raw["taskId"])]
                deadline = loop.time() + 10
                while (await client.task(raw["taskId"]).get())["status"] != "cancelled":
                    assert loop.time() < deadline
                    await asyncio.sleep(0.05)

        asyncio.run(go())
