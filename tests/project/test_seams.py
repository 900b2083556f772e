"""The extension seams: methods through the table, protocol extensions, client result types,
and the one x-mcp-header rule both peers apply (the old drift bug)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Mapping
from typing import Any

import pytest

import rondo  # noqa: E402
from rondo.client import Client as RondoClient  # noqa: E402
from rondo.server import Method  # noqa: E402
from rondo.wire.headers import InvalidToolHeaders, header_bindings  # noqa: E402
from tests.helpers.helpers_core import METHOD_NOT_FOUND, Client, request  # noqa: E402

# -- the drift bug: one x-mcp-header rule for server registration and client view -------------

BAD_SCHEMAS = {
    "under anyOf": {"type": "object", "properties": {"r": {"anyOf": [
        {"type": "string", "x-mcp-header": "Region"}, {"type": "null"}]}}},
    "under items": {"type": "object", "properties": {"r": {"type": "array", "items": {
        "type": "string", "x-mcp-header": "Region"}}}},
    "next to $ref": {"type": "object", "$defs": {"s": {"type": "string"}},
                     "properties": {"r": {"$ref": "#/$defs/s", "type": "string",
                                          "x-mcp-header": "Region"}}},
    "on an object": {"type": "object", "properties": {"r": {"type": "object",
                                                            "x-mcp-header": "Region"}}},
}


# Why the client drops each: the message `header_bindings` gives.
DROPPED_BECAUSE = {
    "under anyOf": "x-mcp-header under r is not reachable through `properties` alone",
    "under items": "x-mcp-header under r is not reachable through `properties` alone",
    "next to $ref": "x-mcp-header on r sits next to $ref",
    "on an object": "x-mcp-header 'Region' on r needs a string, integer or boolean property, not 'object'",
}


@pytest.mark.parametrize("case", sorted(BAD_SCHEMAS))
def test_server_refuses_at_registration_what_the_client_would_drop(case: str) -> None:
    schema = BAD_SCHEMAS[case]
    with pytest.raises(InvalidToolHeaders, match=f"^{re.escape(DROPPED_BECAUSE[case])}$"):
        header_bindings(schema)  # the client's view: the tool would be dropped
    server = rondo.Server("drift")
    with pytest.raises(ValueError, match="x-mcp-header"):
        server.tool(input_schema=schema)(lambda **kw: "ok")
    assert "<lambda>" not in server.tools


def test_a_valid_annotation_binds_the_same_on_both_sides() -> None:
    schema = {"type": "object", "properties": {"where": {"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"}}}}}
    server = rondo.Server("drift")
    server.tool(name="t", input_schema=schema)(lambda **kw: "ok")
    assert server.tools["t"].header_params == header_bindings(schema) == [(("where", "region"), "Region")]


# -- a method through the table, without touching dispatch ------------------------------------


def test_server_method_adds_a_row_to_the_table() -> None:
    server = rondo.Server("table")

    @server.method("example/echo", era="modern", suspends=False)
    async def echo(core: Any, req: Any) -> dict[str, Any]:
        return {"echo": req.params.get("text"), "era": req.dialect.era}

    result = Client(server).result("example/echo", {"text": "hi"})
    assert result["echo"] == "hi" and result["era"] == "modern"
    assert result["resultType"] == "complete"  # the dialect shapes it like any other result
    assert "example/echo" in server.core.methods


def test_era_and_gate_of_a_table_row_are_enforced() -> None:
    server = rondo.Server("table")

    async def legacy_only(core: Any, req: Any) -> dict[str, Any]:
        return {}

    server._add_method(Method("example/old", legacy_only, frozenset({"legacy"})))
    server._add_method(Method("example/gated", legacy_only, gate="tools"))  # no tools registered
    client = Client(server)
    assert client.error("example/old")["code"] == METHOD_NOT_FOUND
    assert client.error("example/gated")["code"] == METHOD_NOT_FOUND
    with pytest.raises(ValueError, match="added twice"):
        server._add_method(Method("example/old", legacy_only))


# -- a protocol extension: methods, capability, a client result type ---------------------------


class Countdown:
    """A toy extension: `tools/call` of `count` answers `resultType: "countdown"`, and the
    client's side polls `countdown/next` until it reaches zero."""

    name = "example.com/countdown"

    def methods(self) -> Iterable[Method]:
        async def next_(core: Any, req: Any) -> dict[str, Any]:
            left = int(req.params["left"]) - 1
            if left > 0:
                return {"resultType": "countdown", "left": left}
            return {"content": [{"type": "text", "text": "lift-off"}]}

        return [Method("countdown/next", next_, frozenset({"modern"}))]

    def capability(self, server: Any) -> Mapping[str, Any] | None:
        return {"from": 3}


class CountdownClient:
    name = "example.com/countdown"
    capability: Mapping[str, Any] = {}

    def __init__(self) -> None:
        self.polls = 0
        self.result_types = {"countdown": self.poll}

    async def poll(self, client: Any, method: str, params: Any, result: dict[str, Any]) -> dict[str, Any]:
        while result.get("resultType") == "countdown":
            self.polls += 1
            result = await client.request("countdown/next", {"left": result["left"]})
        return result


def test_an_extension_adds_methods_capability_and_a_client_result_type() -> None:
    server = rondo.Server("ext")
    server.extension(Countdown())

    @server.tool
    def count() -> Any:
        """Starts a countdown."""
        return None

    # The tool's own answer is complete; the extension's method answers its own result type.
    direct = Client(server).result("countdown/next", {"left": 3})
    assert direct == {"resultType": "countdown", "left": 2, "_meta": direct["_meta"]}
    discovered = Client(server).result("server/discover", {})
    assert discovered["capabilities"]["extensions"] == {"example.com/countdown": {"from": 3}}

    ext = CountdownClient()

    async def go() -> Any:
        async with RondoClient(server, extensions=[ext]) as client:
            # The client declares the extension it was given...
            assert client.handlers.capabilities()["extensions"] == {"example.com/countdown": {}}
            # ...and hands an unknown result type to it instead of refusing it.
            from rondo.client.rounds import finish

            return await finish(client, "tools/call", {"name": "count"},
                                {"resultType": "countdown", "left": 3}, 0, False, None)

    final = asyncio.run(go())
    assert final.text == "lift-off" and ext.polls == 3


def test_the_client_still_refuses_a_result_type_nobody_handles() -> None:
    server = rondo.Server("ext")
    server.extension(Countdown())

    async def go() -> None:
        async with RondoClient(server) as client:
            await client.request("countdown/next", {"left": 3})

    with pytest.raises(rondo.client.ProtocolError, match="unknown resultType 'countdown'"):
        asyncio.run(go())


def test_extension_names_and_duplicates_are_checked_at_start_up() -> None:
    server = rondo.Server("ext")
    server.extension(Countdown())
    with pytest.raises(ValueError, match="installed twice"):
        server.extension(Countdown())

    class Nameless(Countdown):
        name = "nameless"

    with pytest.raises(ValueError, match="vendor.example/feature"):
        rondo.Server("x").extension(Nameless())
    with pytest.raises(ValueError, match="already handled"):
        RondoClient(server, extensions=[CountdownClient(), CountdownClient()])


def test_request_helper_builds_modern_messages() -> None:
    assert request("x")["params"]["_meta"]


def test_serves_agrees_with_the_advertised_capabilities() -> None:
    server = rondo.Server("gates")
    names = ("tools", "prompts", "resources", "completions", "logging", "extensions")
    assert [server.serves(n) for n in names] == [n in server.capabilities() for n in names]
    server.tool(lambda: "x", name="t")
    server.prompt(lambda: "p", name="p")
    server.resource("file:///x")(lambda: "r")
    server.completion(lambda *a: [])
    assert all(server.serves(n) for n in names[:5])
    assert [server.serves(n) for n in names] == [n in server.capabilities() for n in names]
    server.remove_tool("t")
    assert not server.serves("tools") and "tools" not in server.capabilities()


# -- the kernel follows the registry through change events ---------------------------------------


def test_the_core_follows_the_registry_through_change_events() -> None:
    server = rondo.Server("follow")
    seen: list[tuple[str, Any]] = []
    server.on_change(lambda what, detail: seen.append((what, detail)))

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    core = server.core
    assert core.express and core.typed_calls() is not None
    server.notify_resource_updated("file:///a")

    async def echo(core: Any, req: Any) -> dict[str, Any]:
        return {"echo": req.params.get("x")}

    server.method("example/late")(echo)
    assert seen[0] == ("tools", None)
    assert seen[1] == ("resource", "file:///a")
    assert seen[2][0] == "method" and seen[2][1].name == "example/late"
    # The core built before the row came has it: it listened rather than being written to.
    assert core.methods["example/late"] is seen[2][1]
    response = run_core(core, request("example/late", {"x": 5}))
    assert response["result"]["echo"] == 5

    @server.tool
    def sub(a: int, b: int) -> int:
        return a - b

    assert core.typed is None  # the typed lane's union named the tools as they were
    server.method("tools/call")(echo)
    assert not core.express  # a replacing row owns every call


def test_a_task_option_installs_its_default_extension_only_when_used() -> None:
    plain = rondo.Server("plain")

    @plain.tool
    def add(a: int, b: int) -> int:
        return a + b

    plain.settle()
    assert plain.extensions == {} and plain.context_calls == {}
    tasked = rondo.Server("tasked")

    @tasked.tool(task="optional")
    def slow(a: int) -> int:
        return a

    tasked.settle()  # the default comes from the `rondo.tool_options` entry point (pyproject)
    assert list(tasked.extensions) == ["io.modelcontextprotocol/tasks"]
    assert set(tasked.context_calls) == {"start_task"}
    assert type(tasked.extensions["io.modelcontextprotocol/tasks"]).__module__ == "rondo.tasks.extension"


class OwnTasks:
    """An extension of its own that says it serves the `task` option."""

    name = "example.com/own-tasks"
    tool_options = ("task",)

    def methods(self) -> list[Method]:
        return []

    def capability(self, server: Any) -> None:
        return None


def test_an_installed_extension_serving_the_option_keeps_the_default_out() -> None:
    server = rondo.Server("own")
    server.extension(OwnTasks())

    @server.tool(task="required")
    def slow(a: int) -> int:
        return a

    server.settle()
    assert list(server.extensions) == ["example.com/own-tasks"]


def test_an_option_no_package_serves_fails_at_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    from rondo.server import defaults

    monkeypatch.setattr(defaults, "GROUP", "rondo.test.nothing_registered_here")
    server = rondo.Server("orphan")

    @server.tool(task="optional")
    def slow(a: int) -> int:
        return a

    with pytest.raises(RuntimeError, match=r"tool 'slow' uses task=, which no installed extension serves"):
        server.core  # noqa: B018 (building the kernel settles the server)


def test_plain_servers_and_clients_read_no_package_metadata() -> None:
    # The seam costs nothing unused: entry points are read only when an option or half is asked for.
    import subprocess
    import sys

    code = (
        "import sys, asyncio, rondo\n"
        "server = rondo.Server('plain')\n"
        "@server.tool\n"
        "def add(a: int, b: int) -> int:\n"
        "    return a + b\n"
        "server.settle(); server.core\n"
        "async def main():\n"
        "    async with rondo.Client(server) as client:\n"
        "        return (await client.call_tool('add', {'a': 1, 'b': 2})).structured_content\n"
        "print(asyncio.run(main()), 'importlib.metadata' in sys.modules)\n"
    )
    from tests.helpers.measure import unmeasured_env

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=unmeasured_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["3", "False"]


def test_client_halves_load_through_their_entry_point() -> None:
    from rondo.client.halves import client_half

    half = client_half("tasks")
    assert half.__name__ == "rondo.tasks.client"
    with pytest.raises(RuntimeError, match=r"no package registers a client half named 'nope'"):
        client_half("nope")


def run_core(core: Any, message: dict[str, Any]) -> dict[str, Any]:
    response = asyncio.run(core.handle(message))
    assert response is not None
    return response


# -- a row carries its own facts: Mcp-Name field, may it ask, scopes ------------------------------


def test_a_row_declares_its_name_field_may_ask_and_scopes() -> None:
    from rondo.auth.scopes import required_for
    from rondo.wire.meta import INPUT_METHODS, NAME_FIELDS

    server = rondo.Server("facts")

    async def fetch(core: Any, req: Any) -> dict[str, Any]:
        return {}

    assert "example/fetch" not in NAME_FIELDS and "example/fetch" not in INPUT_METHODS
    server.method("example/fetch", name_field="key", may_ask=True, scopes=["fetch:read"])(fetch)
    assert NAME_FIELDS["example/fetch"] == "key" and "example/fetch" in INPUT_METHODS
    assert required_for(server, ("base",), "example/fetch", {}) == ("base", "fetch:read")
    assert required_for(server, ("base",), "tools/list", {}) == ("base",)
    # The built-in rows declare the spec's three; the tasks rows theirs, when made.
    assert {NAME_FIELDS[m] for m in ("tools/call", "prompts/get")} == {"name"}
    assert NAME_FIELDS["resources/read"] == "uri"
    with pytest.raises(ValueError, match="not a valid OAuth scope token"):
        server.method("example/bad", scopes=["has space"])(fetch)


# -- ctx.user_state and server.emit reach their extension through the seam, not by its id ---------


class Recorder:
    """An extension of another name serving `ctx.user_state` and `server.emit`."""

    name = "example.com/recorder"

    def __init__(self) -> None:
        self.emitted: list[tuple[str, Any, dict[str, Any]]] = []

    def methods(self) -> list[Method]:
        return []

    def capability(self, server: Any) -> None:
        return None

    def context_calls(self) -> dict[str, Any]:
        return {"user_state": lambda ctx: {"who": ctx.server_name}}

    def server_calls(self) -> dict[str, Any]:
        return {"emit": lambda name, data, **options: self.emitted.append((name, data, options)) or "sent"}


def test_user_state_and_emit_are_served_by_whichever_extension_provides_them() -> None:
    server = rondo.Server("seamed")
    recorder = server.extension(Recorder())

    @server.tool
    def mine(ctx: rondo.Context) -> str:
        return str(ctx.user_state["who"])

    assert server.emit("order.shipped", {"id": 1}, event_id="e1") == "sent"
    assert recorder.emitted == [("order.shipped", {"id": 1}, {"event_id": "e1"})]

    async def call() -> Any:
        async with RondoClient(server) as client:
            return (await client.call_tool("mine", {})).content[0]["text"]

    assert asyncio.run(call()) == "seamed"


def test_without_the_extension_user_state_and_emit_say_what_to_install() -> None:
    server = rondo.Server("bare")
    with pytest.raises(RuntimeError, match=r"server.emit needs the events extension"):
        server.emit("order.shipped", {})

    @server.tool
    def mine(ctx: rondo.Context) -> str:
        try:
            return str(ctx.user_state)
        except RuntimeError as exc:
            return str(exc)

    async def call() -> Any:
        async with RondoClient(server) as client:
            return (await client.call_tool("mine", {})).content[0]["text"]

    assert asyncio.run(call()).startswith("ctx.user_state needs per-user state installed")
