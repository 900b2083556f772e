"""The relay lane (core/relay.py): a proxied tool's 2026-07-28 call over HTTP is answered from
its raw arguments, without the general dispatch, binding or result shaping, with the answers
the general path gives; configured middleware, a mount's guard or the tasks relay still take
the general path."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import rondo
from rondo.client import Client, ElicitRequest, ElicitResult
from rondo.client.errors import ProtocolError
from rondo.client.types import CallToolResult, convert
from rondo.gateway import mount
from rondo.gateway.upstream import _raw_tool_body, _tool_body
from tests.helpers.gateway_upstream import served, upstream_server
from tests.helpers.polling import until

CALLS: list[tuple[str, Any]] = [
    ("add", {"a": 2, "b": 3}),
    ("echo", {"text": "hi"}),
    ("echo", {"text": 5}),  # the upstream refuses its own arguments: an isError result
    ("fail", None),
    ("picky", {"n": 1}),  # an upstream JSON-RPC error, its data not passed on
    ("nope", {}),
    ("color", None),  # an input round: the proxy's own sealed state
    ("cleanup", {"folder": "/t"}),
    ("adaptive", None),
    ("shaped", None),
    ("add", [1, 2]),  # arguments that are no object
]


def blue(request: ElicitRequest) -> Any:
    return ElicitResult("accept", {"color": "blue"})


def upstream() -> rondo.Server:
    up = upstream_server()

    @up.tool
    def shaped() -> rondo.ToolResult:
        """Structured content, _meta and an image block."""
        return rondo.ToolResult(["one", {"type": "image", "data": "aGk=", "mimeType": "image/png"}],
                                structured={"n": 1, "list": [1, None]}, meta={"up/k": "v"})

    return up


async def outcome(client: Client, name: str, arguments: Any) -> Any:
    """Every round's raw result (each requestState only as present or not, every retry
    answering the questions asked), or the error that ended it."""
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    rounds: list[Any] = []
    sent = params
    for _ in range(4):
        try:
            result = await client.request("tools/call", sent)
        except rondo.McpError as exc:
            return (*rounds, ("error", exc.code, exc.message, exc.data))
        state = result.pop("requestState", None)
        rounds.append(("result", result, state is not None))
        if result["resultType"] != "input_required":
            return tuple(rounds)
        responses = {key: {"action": "accept", "content": {"color": "blue"}}
                     for key in result.get("inputRequests", {})}
        sent = {**params, "inputResponses": responses, "requestState": state}
    raise AssertionError(f"{name}: more than 4 rounds")


def test_the_relay_lane_answers_every_call_as_the_general_path_does() -> None:
    with served(upstream().asgi()) as (url, _):
        front = rondo.proxy(url)
        with served(front.asgi()) as (front_url, _):

            async def every() -> list[Any]:
                async with Client(front_url, protocol="2026-07-28", on_elicit=blue) as client:
                    return [await outcome(client, name, args) for name, args in CALLS]

            relays = {name: tool.relay for name, tool in front.tools.items()}
            assert all(relay is not None for relay in relays.values())
            lane = asyncio.run(every())
            for tool in front.tools.values():
                tool.relay = None  # every call takes the general path
            general = asyncio.run(every())
    assert lane == general
    add, echo, refused, fail, picky, nope, color, cleanup, adaptive, shaped, bad = lane
    assert add[0][1]["structuredContent"] == 5
    assert add[0][1]["content"] == [{"type": "text", "text": "5"}]
    assert echo[0][1]["content"] == [{"type": "text", "text": "hi"}]
    assert refused[0][1]["isError"] is True and fail[0][1]["isError"] is True
    assert picky == (("error", -32602, "n is out of range", None),)
    assert nope[0][:2] == ("error", -32602)
    assert [r[1]["resultType"] for r in color] == ["input_required", "complete"]
    assert color[0][2] is True and color[1][1]["content"][0]["text"] == "color=blue"
    assert len(cleanup) == 3 and cleanup[2][1]["content"][0]["text"] == "step 2: /t blue"
    assert adaptive[-1][1]["content"][0]["text"] == "asked: blue"
    assert shaped[0][1] == {
        "content": [{"type": "text", "text": "one"},
                    {"type": "image", "data": "aGk=", "mimeType": "image/png"}],
        "structuredContent": {"n": 1, "list": [1, None]}, "_meta": {"up/k": "v"},
        "resultType": "complete"}
    assert bad[0][:2] == ("error", -32602)


def test_a_relayed_call_takes_the_lane_and_never_the_tools_own_function() -> None:
    with served(upstream_server().asgi()) as (url, _):
        front = rondo.proxy(url)
        with served(front.asgi()) as (front_url, _):

            def general(**_: Any) -> Any:
                raise AssertionError("the general path ran")

            async def add() -> Any:
                async with Client(front_url, protocol="2026-07-28") as client:
                    return await client.call_tool("add", {"a": 2, "b": 3})

            front.tools["add"].fn = general
            assert (asyncio.run(add())).text == "5"
            front.tools["add"].relay = None  # the same call, the general path: it fails
            failed = asyncio.run(add())
    assert failed.is_error and "Internal error in tool 'add'" in failed.text


def asgi_call(app: Any, body: dict[str, Any], gone: asyncio.Event | None = None
              ) -> tuple[Any, list[dict[str, Any]]]:
    """`app` called with one 2026-07-28 request as raw ASGI, in a task of its own: (the task,
    what it sent). `gone` set: the client leaves (`http.disconnect`)."""
    import json

    message = json.dumps(body).encode()
    headers = [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
               (b"accept", b"application/json, text/event-stream"),
               (b"mcp-protocol-version", b"2026-07-28"), (b"mcp-method", b"tools/call"),
               (b"mcp-name", body["params"]["name"].encode())]
    sent: list[dict[str, Any]] = []
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": message, "more_body": False}
        await (gone or asyncio.Event()).wait()
        return {"type": "http.disconnect"}

    async def send(event: dict[str, Any]) -> None:
        sent.append(event)

    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers,
             "scheme": "http", "server": ("127.0.0.1", 80), "query_string": b""}
    return asyncio.ensure_future(app(scope, receive, send)), sent


def tool_call(name: str, arguments: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": name, "arguments": arguments,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}, **meta}}}


def test_a_quiet_relayed_call_waits_in_the_requests_own_task_a_streaming_one_in_its_own() -> None:
    # Asking for no progress and no log messages, nothing can stream while the relay waits:
    # it runs in the request's task. A progress token (or a log level) gets a task of its own,
    # whose notifications stream while the request's task writes them.
    server = rondo.Server("relaying")
    ran_in: list[Any] = []

    @server.tool
    async def hop() -> str:
        """Relayed (a coroutine, as a proxy's tools are: a plain one takes the express lane)."""
        raise AssertionError("the general path ran")

    async def relay(ctx: Any, arguments: dict[str, Any]) -> dict[str, Any]:
        ran_in.append(asyncio.current_task())
        await asyncio.sleep(0.01)  # it waits, as a relay does on its upstream
        return {"content": [{"type": "text", "text": "hopped"}]}

    server.tools["hop"].relay = relay

    async def main() -> list[bool]:
        app = server.asgi()
        own: list[bool] = []
        async with server.started():
            for meta in ({}, {"progressToken": "p"},
                         {"io.modelcontextprotocol/logLevel": "info"}):
                task, sent = asgi_call(app, tool_call("hop", {}, **meta))
                await asyncio.wait_for(task, 5)
                assert b'"text":"hopped"' in b"".join(e.get("body", b"") for e in sent)
                own.append(ran_in[-1] is task)
        return own

    assert asyncio.run(main()) == [True, False, False]


def test_a_client_that_leaves_a_quiet_relayed_call_cancels_it_upstream() -> None:
    from tests.helpers.gateway_upstream import CANCELLED, STARTED

    tag = "quiet-lane-left"
    with served(upstream_server().asgi()) as (url, _):
        front = rondo.proxy(url)

        async def main() -> list[dict[str, Any]]:
            gone = asyncio.Event()
            async with front.started():
                task, sent = asgi_call(front.asgi(), tool_call("wait", {"tag": tag}), gone)
                await until(lambda: tag in STARTED, 10, "the upstream never got the call")
                assert not task.done()
                gone.set()
                await asyncio.wait_for(task, 10)  # the request ends: no hang, no exception
                await until(lambda: tag in CANCELLED, 10, "the upstream call was never cancelled")
            return sent

        sent = asyncio.run(main())
    body = b"".join(e.get("body", b"") for e in sent)
    assert b'"Request cancelled"' in body  # the answer a gone client would have had


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
def test_middleware_on_the_proxy_still_sees_every_relayed_call(protocol: str) -> None:
    seen: list[tuple[str, Any]] = []

    async def audit(request: Any, call_next: Any) -> Any:
        if request.method == "tools/call":
            seen.append((request.params["name"], dict(request.params.get("arguments") or {})))
        return await call_next()

    with served(upstream_server().asgi()) as (url, _):
        front = rondo.proxy(url, middleware=[audit])
        with served(front.asgi()) as (front_url, _):

            async def go() -> None:
                async with Client(front_url, protocol=protocol, on_elicit=blue) as client:
                    assert (await client.call_tool("add", {"a": 2, "b": 3})).text == "5"
                    assert (await client.call_tool("color")).text == "color=blue"

            asyncio.run(go())
    assert seen[0] == ("add", {"a": 2, "b": 3})
    # one per round, on either era (a legacy session's rounds run through middleware too)
    assert [name for name, _ in seen] == ["add", "color", "color"]


@pytest.mark.parametrize("visible", [None, "guarded"])
def test_a_mounted_proxy_relays_under_its_new_name_and_a_guard_still_refuses(
        visible: str | None) -> None:
    def shown(principal: Any, kind: str, name: str) -> bool:
        return name != "echo"

    with served(upstream_server().asgi()) as (url, _):
        parent = rondo.Server("parent")
        mount(parent, rondo.proxy(url), namespace="up",
              visible=shown if visible else None)
        with served(parent.asgi()) as (parent_url, _):
            tool = parent.tools["up_add"]
            assert tool.relay is not None

            def general(**_: Any) -> Any:
                raise AssertionError("the general path ran")

            tool.fn = general

            async def go() -> None:
                async with Client(parent_url, protocol="2026-07-28") as client:
                    added = await client.call_tool("up_add", {"a": 2, "b": 3})
                    if visible:  # the guard is middleware: the general path, which fails here
                        assert added.is_error
                        with pytest.raises(rondo.McpError, match="^Unknown tool: up_echo$"):
                            await client.call_tool("up_echo", {"text": "hi"})
                    else:
                        assert added.text == "5"
                        assert (await client.call_tool("up_echo", {"text": "hi"})).text == "hi"

            asyncio.run(go())


@pytest.mark.parametrize("first", ["lane", "general"])
def test_a_round_sealed_on_one_path_is_answered_on_the_other(first: str) -> None:
    # The lane seals a relayed round without question digests, the general path with them:
    # either retry opens either state (a proxy given middleware between two rounds, a fleet
    # mid-upgrade).
    with served(upstream_server().asgi()) as (url, _):
        front = rondo.proxy(url)
        with served(front.asgi()) as (front_url, _):
            tool = front.tools["color"]
            relay = tool.relay

            async def go() -> Any:
                async with Client(front_url, protocol="2026-07-28", on_elicit=blue) as client:
                    tool.relay = relay if first == "lane" else None
                    asked = await client.request("tools/call", {"name": "color"})
                    assert asked["resultType"] == "input_required"
                    tool.relay = None if first == "lane" else relay
                    key = next(iter(asked["inputRequests"]))
                    return await client.request("tools/call", {
                        "name": "color", "requestState": asked["requestState"],
                        "inputResponses": {key: {"action": "accept",
                                                 "content": {"color": "blue"}}}})

            done = asyncio.run(go())
    assert done["resultType"] == "complete"
    assert done["content"] == [{"type": "text", "text": "color=blue"}]


_ITEMS = st.one_of(
    st.text(max_size=3), st.integers(), st.none(),
    st.fixed_dictionaries({"type": st.sampled_from(["text", "image", "audio", "resource",
                                                    "resource_link", "video", 1])},
                          optional={"text": st.text(max_size=3), "data": st.just("aGk="),
                                    "mimeType": st.just("image/png"), "uri": st.just("x:/a"),
                                    "name": st.just("a"), "resource": st.just({"uri": "x:/a"})}))
_ANY = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3),
                 st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2),
                                                                      st.integers(), max_size=2))


@settings(max_examples=400, deadline=None)
@example({"content": [{"type": "text"}, ""]})  # a bad block before a non-object
@given(st.fixed_dictionaries({}, optional={
    "content": st.one_of(st.lists(_ITEMS, max_size=3), _ANY), "isError": _ANY,
    "_meta": _ANY, "structuredContent": _ANY, "resultType": st.just("complete"),
    "extra": _ANY}))
def test_the_lanes_raw_result_is_checked_and_shaped_as_the_typed_one(result: dict[str, Any]
                                                                     ) -> None:
    # The relay lane takes a 2026-07-28 upstream's result as sent (`Client.resume(raw=True)`):
    # the same body, or the same failure (ProtocolError: "upstream unavailable"; TypeError:
    # the tool's isError result), as converting it to `CallToolResult` and shaping that.
    def typed() -> Any:
        try:
            return _tool_body(convert(result, CallToolResult, "tools/call result"))
        except (ProtocolError, TypeError) as exc:
            return type(exc)

    def raw() -> Any:
        try:
            return _raw_tool_body(result)
        except (ProtocolError, TypeError) as exc:
            return type(exc)

    assert raw() == typed()


LAZY = '''
import sys

import httpx

import rondo
from tests.helpers.gateway_upstream import upstream_server
from tests.helpers.loopback import served

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}
HEADERS = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "add",
           "Accept": "application/json, text/event-stream"}
BODY = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 2, "b": 3}, "_meta": META}}


def add_at(url):
    answer = httpx.post(url, json=BODY, headers=HEADERS, timeout=10).json()
    return answer["result"]["content"][0]["text"]


with served(upstream_server().asgi()) as (url, _):
    print("plain", add_at(url), "rondo.core.relay" in sys.modules)
    with served(rondo.proxy(url).asgi()) as (front, _):
        print("proxied", add_at(front), "rondo.core.relay" in sys.modules)
'''


def test_the_relay_lane_is_imported_by_the_first_relayed_call_not_by_a_plain_server() -> None:
    """A feature not configured costs nothing: a served server without relaying tools answers a
    call without loading core/relay.py; the first call through a proxy loads it."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]  # this tree's rondo, whatever the venv points at
    path = os.pathsep.join([str(root / "src"), str(root)])
    done = subprocess.run([sys.executable, "-c", LAZY], capture_output=True, text=True,
                          timeout=60, cwd=root, env={**os.environ, "PYTHONPATH": path})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["plain 5 False", "proxied 5 True"]
