"""rondo.proxy: an upstream on real loopback HTTP, served through a proxy to rondo.Client on
both downstream eras; rounds relayed with the upstream's state sealed in the proxy's own."""

from __future__ import annotations

import asyncio
import socket
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import rondo
from rondo.client import Client, ElicitRequest, ElicitResult, PendingCall
from tests.helpers.gateway_upstream import Recorder, served, stop, upstream_server

ERAS = ["2025-11-25", "2026-07-28"]
TOOLS = ["adaptive", "add", "chatty", "cleanup", "color", "count", "echo", "fail", "grow",
         "hang", "picky", "wait"]


def blue(request: ElicitRequest) -> Any:
    return ElicitResult("accept", {"color": "blue"})


@pytest.fixture
def upstream() -> Any:
    recorder = Recorder(upstream_server().asgi())
    with served(recorder) as (url, server):
        yield url, recorder, server


@pytest.mark.parametrize("protocol", ERAS)
def test_everything_relayed_over_http_on_both_downstream_eras(upstream: Any, protocol: str) -> None:
    url, recorder, _ = upstream
    front = rondo.proxy(url, headers={"Authorization": "Bearer proxy-own"})
    with served(front.asgi()) as (front_url, _):

        async def go() -> None:
            async with Client(front_url, protocol=protocol, on_elicit=blue,
                              headers={"Authorization": "Bearer client-secret"}) as client:
                assert client.era == ("legacy" if protocol == "2025-11-25" else "modern")
                tools = await client.list_tools()
                assert sorted(t.name for t in tools) == TOOLS  # twelve tools over six pages
                assert {t.name: t.description for t in tools}["add"] == "Add two numbers."
                assert (await client.call_tool("add", {"a": 2, "b": 3})).text == "5"
                assert (await client.call_tool("color")).text == "color=blue"
                assert (await client.call_tool("cleanup", {"folder": "/t"})).text == (
                    "step 2: /t blue")
                failed = await client.call_tool("fail")
                assert failed.is_error and failed.text == "upstream says no"
                with pytest.raises(rondo.McpError, match="Unknown tool: nope"):
                    await client.call_tool("nope")
                with pytest.raises(rondo.McpError, match="^n is out of range$") as caught:
                    await client.call_tool("picky", {"n": 1})
                assert caught.value.code == -32602 and caught.value.data is None
                prompts = await client.list_prompts()
                assert [(p.name, [a.name for a in p.arguments]) for p in prompts] == [
                    ("greet", ["name"])]
                got = await client.get_prompt("greet", {"name": "Ada"})
                assert got.messages[0].content == {"type": "text", "text": "Hello Ada"}
                assert [r.uri for r in await client.list_resources()] == ["up://today"]
                assert [t.uri_template for t in await client.list_resource_templates()] == [
                    "up://city/{name}"]
                assert (await client.read_resource("up://today")).text == "sunny"
                assert (await client.read_resource("up://city/Oslo")).text == "rain in Oslo"

        asyncio.run(go())
    assert recorder.posts, "nothing reached the upstream"
    # The proxy's own credential went upstream on every request; the client's never did.
    assert {post.get("authorization") for post in recorder.posts} == {"Bearer proxy-own"}
    assert not any("client-secret" in value for post in recorder.posts for value in post.values())


def test_modern_state_is_sealed_by_the_proxy_and_tampering_never_reaches_upstream(
        upstream: Any) -> None:
    url, recorder, _ = upstream
    front = rondo.proxy(url)

    async def go() -> None:
        async with front.started(), Client(front, on_elicit=blue) as client:
            pending = await client.call_tool("cleanup", {"folder": "/t"}, manual=True)
            assert isinstance(pending, PendingCall) and pending.input_requests == {}
            token = pending.request_state
            assert isinstance(token, str)
            # The upstream's own state is inside the proxy's sealed token, not beside it.
            assert "step" not in token
            before = len(recorder.posts)
            for forged in (token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB"),
                           "not-a-token", ""):
                bad = PendingCall(method="tools/call", params=pending.params,
                                  request_state=forged)
                with pytest.raises(rondo.McpError, match="^Invalid requestState") as caught:
                    await client.resume(bad, {}, manual=True)
                assert caught.value.code == -32602
            # Crossed: a state sealed for one tool call, presented on another.
            crossed = PendingCall(method="tools/call",
                                  params={"name": "cleanup", "arguments": {"folder": "/other"}},
                                  request_state=token)
            with pytest.raises(rondo.McpError, match="^Invalid requestState") as caught:
                await client.resume(crossed, {}, manual=True)
            assert caught.value.code == -32602
            assert len(recorder.posts) == before  # refused before anything reached upstream
            second = await client.resume(pending, {}, manual=True)
            assert isinstance(second, PendingCall) and list(second.input_requests) == ["confirm"]
            done = await client.resume(second, {"confirm": {"action": "accept",
                                                            "content": {"color": "red"}}})
            assert done.text == "step 2: /t red"

    asyncio.run(go())


def test_a_question_the_client_cannot_answer_is_minus_32021() -> None:
    up = upstream_server()
    with served(up.asgi()) as (url, _):
        front = rondo.proxy(url)

        async def go() -> None:
            async with front.started(), Client(front) as client:  # declares no elicitation
                with pytest.raises(rondo.McpError, match="Missing required client capability"
                                   ) as caught:
                    await client.call_tool("color")
                assert caught.value.code == -32021
                assert caught.value.data["requiredCapabilities"] == {"elicitation": {"form": {}}}

        asyncio.run(go())


@pytest.mark.parametrize("protocol", ERAS)
def test_the_upstream_sees_what_the_client_declared(upstream: Any, protocol: str) -> None:
    url, _, _ = upstream
    front = rondo.proxy(url)

    async def go() -> None:
        async with front.started():
            async with Client(front, protocol=protocol) as client:  # no elicitation declared
                assert (await client.call_tool("adaptive")).text == "not asked"
            async with Client(front, protocol=protocol, on_elicit=blue) as client:
                assert (await client.call_tool("adaptive")).text == "asked: blue"

    asyncio.run(go())


@pytest.mark.parametrize("protocol", ERAS)
def test_upstream_progress_reaches_a_client_that_asked(upstream: Any, protocol: str) -> None:
    url, _, _ = upstream
    front = rondo.proxy(url)
    seen: list[tuple[Any, Any, Any]] = []

    async def go() -> None:
        async with front.started(), Client(front, protocol=protocol) as client:
            result = await client.call_tool(
                "count", on_progress=lambda p, t, m: seen.append((p, t, m)))
            assert result.text == "counted"

    asyncio.run(go())
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


@pytest.mark.parametrize("protocol", ERAS)
def test_completion_is_relayed_for_prompts_and_templates(upstream: Any, protocol: str) -> None:
    url, _, _ = upstream
    front = rondo.proxy(url)

    async def go() -> None:
        async with front.started(), Client(front, protocol=protocol) as client:
            done = await client.complete({"type": "ref/prompt", "name": "greet"}, "name", "A")
            assert (done.values, done.total, done.has_more) == (
                ["greet:Ada", "greet:Alan"], 2, False)
            done = await client.complete({"type": "ref/resource", "uri": "up://city/{name}"},
                                         "name", "G")
            assert done.values == ["up://city/{name}:Grace"]
            with pytest.raises(rondo.McpError, match="^Unknown prompt: nope$"):
                await client.complete({"type": "ref/prompt", "name": "nope"}, "name", "A")

    asyncio.run(go())


@pytest.mark.parametrize("upstream_era", ERAS)
@pytest.mark.parametrize("protocol", ERAS)
def test_upstream_log_messages_reach_the_client_at_its_level(
        upstream: Any, protocol: str, upstream_era: str) -> None:
    url, _, _ = upstream
    front = rondo.proxy(url, upstream_protocol=upstream_era)
    heard: list[Any] = []

    def note(message: Any) -> None:
        if message.get("method") == "notifications/message":
            heard.append(message["params"])

    async def go() -> None:
        async with front.started(), Client(front, protocol=protocol, log_level="info",
                                           on_notification=note) as client:
            assert (await client.call_tool("chatty")).text == "chatted"

    asyncio.run(go())
    # debug is below the client's level: dropped; the logger name and structured data kept.
    assert heard == [{"level": "info", "data": {"step": 1}, "logger": "chatty"},
                     {"level": "warning", "data": "careful"}]


@pytest.mark.parametrize("upstream_era", ERAS)
@pytest.mark.parametrize("protocol", ERAS)
def test_a_cancelled_call_is_cancelled_upstream(upstream: Any, protocol: str,
                                                 upstream_era: str) -> None:
    from tests.helpers.gateway_upstream import CANCELLED, STARTED

    url, _, _ = upstream
    front = rondo.proxy(url, upstream_protocol=upstream_era)
    tag = f"{protocol}/{upstream_era}"

    async def go() -> None:
        async with front.started(), Client(front, protocol=protocol) as client:
            call = asyncio.ensure_future(client.call_tool("wait", {"tag": tag}))
            deadline = asyncio.get_running_loop().time() + 10
            while tag not in STARTED:  # the call reached the upstream's handler
                assert asyncio.get_running_loop().time() < deadline, "upstream never called"
                await asyncio.sleep(0.02)
            call.cancel()
            await asyncio.wait({call})
            assert call.cancelled()
            while tag not in CANCELLED:  # the upstream's handler ended by cancellation
                assert asyncio.get_running_loop().time() < deadline, "upstream never cancelled"
                await asyncio.sleep(0.05)
            assert (await client.call_tool("echo", {"text": "after"})).text == "after"

    asyncio.run(go())


def test_upstream_down_is_a_clean_error_within_the_bound(upstream: Any) -> None:
    url, _, server = upstream
    front = rondo.proxy(url, timeout=2.0)

    async def go() -> None:
        async with front.started(), Client(front) as client:
            assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
            stop(server)
            await closed(url)
            # A refused connection, answered at once; wait_for is only a hang guard.
            with pytest.raises(rondo.McpError, match="^upstream unavailable$") as caught:
                await asyncio.wait_for(client.call_tool("echo", {"text": "hi"}), 10)
            assert caught.value.code == -32603
            assert "127.0.0.1" not in caught.value.message

    asyncio.run(go())


async def closed(url: str) -> None:
    """Poll, with a deadline, until nothing listens on the URL's port any more."""
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    deadline = time.monotonic() + 15
    while True:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) != 0:
                return
        assert time.monotonic() < deadline, "the upstream never went down"
        await asyncio.sleep(0.05)


def test_an_upstream_that_does_not_answer_is_a_clean_error_within_the_bound(
        upstream: Any) -> None:
    url, _, _ = upstream
    front = rondo.proxy(url, timeout=1.0)

    async def go() -> None:
        async with front.started(), Client(front) as client:
            # The message names the proxy's 1 s bound as what ended the call; wait_for is only
            # a hang guard.
            with pytest.raises(rondo.McpError, match="^upstream did not answer within 1 s$"):
                await asyncio.wait_for(client.call_tool("hang"), 10)
            assert (await client.call_tool("echo", {"text": "still"})).text == "still"

    asyncio.run(go())


@pytest.mark.parametrize("protocol", ERAS)
def test_a_stdio_upstream_given_as_a_command_line(protocol: str) -> None:
    upstream = Path(__file__).resolve().parents[1].joinpath('helpers', "gateway_upstream.py")
    front = rondo.proxy([sys.executable, str(upstream)], timeout=20.0)

    async def go() -> None:
        async with front.started(), Client(front, protocol=protocol, on_elicit=blue) as client:
            assert sorted(t.name for t in await client.list_tools()) == TOOLS
            assert (await client.call_tool("add", {"a": 1, "b": 2})).text == "3"
            assert (await client.call_tool("color")).text == "color=blue"
            assert (await client.call_tool("cleanup", {"folder": "/s"})).text == (
                "step 2: /s blue")

    asyncio.run(go())


@pytest.mark.parametrize("upstream_era", ERAS)
def test_the_upstreams_list_changes_reach_the_proxys_clients(upstream: Any,
                                                              upstream_era: str) -> None:
    url, _, _ = upstream
    front = rondo.proxy(url, upstream_protocol=upstream_era, timeout=10.0)

    async def go() -> None:
        async with front.started(), Client(front) as client:
            assert "extra" not in [t.name for t in await client.list_tools()]
            async with client.listen(tools=True) as sub:
                assert (await client.call_tool("grow")).text == "grown"
                deadline = asyncio.get_running_loop().time() + 10
                while "extra" not in [t.name for t in await client.list_tools()]:
                    note = await asyncio.wait_for(
                        sub.__anext__(), deadline - asyncio.get_running_loop().time())
                    assert note["method"] == "notifications/tools/list_changed"
            assert (await client.call_tool("extra")).text == "extra"
            assert sorted(t.name for t in await client.list_tools()) == sorted([*TOOLS, "extra"])

    asyncio.run(go())


def test_unreachable_upstream_fails_the_start() -> None:
    from tests.helpers.gateway_upstream import free_port

    front = rondo.proxy(f"http://127.0.0.1:{free_port()}/mcp", timeout=2.0)

    async def go() -> None:
        async with front.started():
            raise AssertionError("started without its upstream")

    with pytest.raises(RuntimeError, match="cannot reach its upstream"):
        asyncio.run(go())


@pytest.mark.parametrize("bad", ["ftp://x", "", [], [1], None])
def test_bad_upstreams_are_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match="an upstream is"):
        rondo.proxy(bad)


def test_a_proxy_needs_a_state_policy() -> None:
    with pytest.raises(ValueError, match="state=None is refused"):
        rondo.proxy("http://127.0.0.1:1/mcp", state=None)
