"""rondo.Client against a rondo.Server in the same process (memory transport), both eras."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

import rondo
from rondo.client import (
    CallToolResult,
    Client,
    ElicitRequest,
    ElicitResult,
    InputRequiredError,
    McpError,
    PendingCall,
    ProtocolError,
    Root,
    SamplingResult,
)
from rondo.wire.meta import CLIENT_CAPABILITIES, CLIENT_INFO, PROTOCOL_VERSION
from tests.helpers.client_fixture import server
from tests.helpers.scripted import Scripted


def pick_blue(request: ElicitRequest) -> Any:
    if request.mode == "url":
        return {"action": "accept"}
    return ElicitResult("accept", {"color": "blue"})


async def model(request: Any) -> SamplingResult:
    return SamplingResult(role="assistant", content={"type": "text", "text": "short"}, model="m")


def spy(client: Client) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    original = client.transport.request

    async def recording(message: dict[str, Any], headers: Any = None) -> dict[str, Any]:
        sent.append(message)
        return await original(message, headers)

    client.transport.request = recording  # type: ignore[method-assign]
    return sent


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_probe_settles_modern_and_every_request_carries_the_envelope() -> None:
    async def go() -> None:
        async with Client(server, on_elicit=pick_blue) as client:
            assert client.era == "modern" and client.protocol_version == "2026-07-28"
            assert client.server_info == {"name": "client-fixture", "version": "1.0.0"}
            sent = spy(client)
            result = await client.call_tool("color")
            assert isinstance(result, CallToolResult) and result.text == "color=blue"
            assert len(sent) == 2 and sent[0]["id"] != sent[1]["id"]
            for message in sent:
                meta = message["params"]["_meta"]
                assert meta[PROTOCOL_VERSION] == "2026-07-28"
                assert meta[CLIENT_INFO]["name"] == "rondo-client"
                assert meta[CLIENT_CAPABILITIES] == {"elicitation": {"form": {}}}
            assert sent[1]["params"]["inputResponses"] == {"color": {"action": "accept", "content": {"color": "blue"}}}
            assert isinstance(sent[1]["params"]["requestState"], str)

    run(go())


def test_capabilities_follow_the_installed_handlers() -> None:
    async def go() -> None:
        async with Client(server) as client:
            assert client.handlers.capabilities() == {}
            with pytest.raises(McpError, match="^Missing required client capability$") as caught:
                await client.call_tool("color")
            assert caught.value.code == -32021  # the server may not ask what we did not declare
        caps = Client(server, on_elicit=pick_blue, elicit_modes=("form", "url"), on_sample=model,
                      sampling_tools=True, on_roots=[Root("file:///w")]).handlers.capabilities()
        assert caps == {"elicitation": {"form": {}, "url": {}}, "sampling": {"tools": {}}, "roots": {}}

    run(go())


def test_sampling_roots_url_and_several_questions_at_once() -> None:
    async def roots() -> list[Root]:
        return [Root("file:///work", "work")]

    async def go() -> None:
        async with Client(server, on_elicit=pick_blue, elicit_modes=("form", "url"), on_sample=model,
                          on_roots=roots) as client:
            assert (await client.call_tool("summary")).text == "model said short"
            assert (await client.call_tool("where")).text == "file:///work"
            assert (await client.call_tool("everything")).text == "blue @ file:///work"
            assert (await client.call_tool("link")).text == "link accept"

    run(go())


def test_url_elicitation_without_url_mode_is_refused_before_any_retry() -> None:
    async def go() -> None:
        async with Client(server, on_elicit=pick_blue) as client:  # form only
            with pytest.raises(McpError, match="^Missing required client capability$") as caught:
                await client.call_tool("link")
            assert caught.value.code == -32021

    run(go())


def test_a_malformed_answer_is_caught_before_the_retry() -> None:
    async def go() -> None:
        async with Client(server, on_elicit=lambda r: {"action": "accept", "content": {"color": "green"}}) as client:
            sent = spy(client)
            with pytest.raises(InputRequiredError, match=re.escape(
                    "the form handler's answer to input request 'color' is malformed: "
                    "content.color: must be one of ['red', 'blue']")) as caught:
                await client.call_tool("color")
            assert caught.value.reason == "unanswerable"
            assert caught.value.last_result["resultType"] == "input_required"
            assert len(sent) == 1

    run(go())


def test_declined_answer() -> None:
    async def go() -> None:
        async with Client(server, on_elicit=lambda r: {"action": "decline"}) as client:
            assert (await client.call_tool("color")).text == "no color (decline)"

    run(go())


def test_manual_mode_serialises_and_resumes_in_another_client() -> None:
    async def go() -> None:
        async with Client(server, on_elicit=pick_blue) as client:
            pending = await client.call_tool("color", manual=True)
            assert isinstance(pending, PendingCall)
            assert pending.method == "tools/call" and pending.params == {"name": "color"}
            assert set(pending.input_requests) == {"color"} and pending.request_state
            blob = pending.to_json()
        async with Client(server, on_elicit=pick_blue) as other:
            restored = PendingCall.from_json(blob)
            assert restored == pending
            result = await other.resume(restored, {"color": {"action": "accept", "content": {"color": "red"}}})
            assert result.text == "color=red"
            again = await other.call_tool("color", manual=True)
            assert (await other.resume(again)).text == "color=blue"  # handlers answer when none given

    run(go())


def test_lists_page_through_and_cache() -> None:
    async def go() -> None:
        async with Client(server) as client:
            sent = spy(client)
            names = [tool.name for tool in await client.list_tools()]
            assert names == ["echo", "color", "summary", "where", "everything", "link", "slow_count",
                             "extra_one", "extra_two"]
            pages = [m for m in sent if m["method"] == "tools/list"]
            assert len(pages) == 5 and "cursor" not in pages[0]["params"]
            await client.list_tools()
            assert len([m for m in sent if m["method"] == "tools/list"]) == 5  # all pages were fresh
            await client.list_tools(refresh=True)
            assert len([m for m in sent if m["method"] == "tools/list"]) == 10
            templates = await client.list_resource_templates()
            assert templates[0].uri_template == "memo://{name}"
            first = await client.read_resource("memo://a")
            assert first.text == "memo a"
            await client.read_resource("memo://a")
            assert len([m for m in sent if m["method"] == "resources/read"]) == 1
            prompts = await client.list_prompts()
            assert prompts[0].name == "greet" and prompts[0].arguments[0].name == "name"
            got = await client.get_prompt("greet", {"name": "Ann"})
            assert got.messages[0].content["text"] == "Hello Ann"
            done = await client.complete({"type": "ref/prompt", "name": "greet"}, "name", "r")
            assert done.values == ["red", "rose"]

    run(go())


def test_progress_callback_sees_each_step() -> None:
    seen: list[tuple[Any, Any, Any]] = []

    async def go() -> None:
        async with Client(server) as client:
            result = await client.call_tool("slow_count", on_progress=lambda p, t, m: seen.append((p, t, m)))
            assert result.text == "counted"

    run(go())
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


def test_listen_acknowledges_and_delivers_list_changes() -> None:
    async def go() -> None:
        async with Client(server) as client:
            await client.list_tools()
            async with client.listen(tools=True) as sub:
                assert sub.acknowledged == {"toolsListChanged": True}
                server.notify_tools_changed()
                note = await asyncio.wait_for(sub.__anext__(), 5)
                assert note["method"] == "notifications/tools/list_changed"
            assert client.cache.get("tools/list", None) is None  # the change made the cache stale

    run(go())


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
def test_pinned_protocol(protocol: str) -> None:
    async def go() -> None:
        async with Client(server, protocol=protocol, on_elicit=pick_blue, on_roots=[Root("file:///r")]) as client:
            assert client.protocol_version == protocol
            assert client.era == ("legacy" if protocol.startswith("2025") else "modern")
            assert (await client.call_tool("color")).text == "color=blue"
            assert (await client.call_tool("everything")).text == "blue @ file:///r"

    run(go())


def test_result_types_missing_unknown_and_misplaced() -> None:
    async def go(result: dict[str, Any]) -> Any:
        async with Client(Scripted(lambda m: {"result": result}), protocol="2026-07-28") as client:
            return await client.call_tool("x")

    assert run(go({"content": [{"type": "text", "text": "old"}]})).text == "old"
    with pytest.raises(ProtocolError, match="unknown resultType 'task'"):
        run(go({"resultType": "task"}))

    async def listing() -> Any:
        answer = {"result": {"resultType": "input_required", "requestState": "s"}}
        async with Client(Scripted(lambda m: answer), protocol="2026-07-28") as client:
            return await client.list_tools()

    with pytest.raises(ProtocolError, match="cannot return"):
        run(listing())


def test_endless_state_only_rounds_hit_the_cap() -> None:
    async def go() -> None:
        answer = {"result": {"resultType": "input_required", "requestState": "again"}}
        async with Client(Scripted(lambda m: answer), protocol="2026-07-28", max_rounds=3) as client:
            with pytest.raises(InputRequiredError, match=r"^server still asked for input after 3 rounds \(cap 3\)$") as caught:
                await client.call_tool("x")
            assert caught.value.reason == "rounds" and caught.value.rounds == 3

    run(go())


def test_unsupported_version_is_retried_with_a_listed_one() -> None:
    seen: list[str] = []

    def answer(message: dict[str, Any]) -> dict[str, Any]:
        seen.append(message["params"]["_meta"][PROTOCOL_VERSION])
        if len(seen) == 1:
            return {"error": {"code": -32022, "message": "Unsupported", "data": {"supported": ["2026-07-28"]}}}
        return {"result": {"resultType": "complete", "tools": []}}

    async def go() -> None:
        async with Client(Scripted(answer), protocol="2026-07-28") as client:
            assert await client.list_tools() == []

    run(go())
    assert seen == ["2026-07-28", "2026-07-28"]


def test_pagination_that_never_ends_is_refused() -> None:
    answer = {"result": {"resultType": "complete", "tools": [], "nextCursor": "same"}}

    async def go() -> None:
        async with Client(Scripted(lambda m: answer), protocol="2026-07-28") as client:
            await client.list_tools()

    with pytest.raises(ProtocolError, match="does not end"):
        run(go())


# -- calling a protected server in memory as a principal (rondo.testing.principal) -----------

def _guarded_server():
    from rondo.auth import ResourceServer

    server = rondo.Server("guarded", state=rondo.StatePolicy(secret=b"k" * 32), auth=ResourceServer(
        resource="https://mcp.example.com/mcp", issuer="https://sso.example.com"))

    @server.tool
    def whoami(ctx: rondo.Context) -> str:
        return f"{ctx.auth.subject}|{ctx.auth.client_id}|{' '.join(sorted(ctx.auth.scopes))}"

    return server


def test_in_memory_client_calls_as_the_given_principal() -> None:
    from rondo.testing import principal

    async def go(**kw):
        async with Client(_guarded_server(), **kw) as client:
            return await client.call_tool("whoami")

    assert asyncio.run(go(auth=principal("alice", scopes=["b", "a"]))).text == "alice|rondo-tests|a b"
    assert asyncio.run(go(auth=principal(None, client_id="job"))).text == "None|job|"
    assert asyncio.run(go()).is_error  # the friction: without a principal ctx.auth is None


def test_principal_helper_refuses_what_no_token_could_say() -> None:
    from rondo.testing import principal

    with pytest.raises(ValueError, match="subject or a client_id"):
        principal(None, client_id=None)
    with pytest.raises(TypeError, match="not one string"):
        principal("alice", scopes="a b")  # type: ignore[arg-type]
    assert principal("bob", claims={"tenant": "t1"}).claims["tenant"] == "t1"


def test_auth_that_is_not_a_principal_is_refused_for_an_in_memory_server() -> None:
    with pytest.raises(ValueError, match="rondo.testing.principal"):
        Client(_guarded_server(), auth=object())
