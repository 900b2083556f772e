"""`rondo.Client` edges a happy-path user never hits: bad construction, use after close,
completion context, listen options and misuse, async callbacks, resuming the wrong thing,
and malformed answers. In memory against a real rondo.Server, or a scripted transport."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import rondo
from rondo import elicit
from rondo.client import Client, ClientError, InputRequiredError, PendingCall, ProtocolError
from tests.helpers.scripted import Scripted


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 20))


def make_server() -> rondo.Server:
    server = rondo.Server("edges")

    @server.tool
    async def work(ctx: rondo.Context) -> str:
        """Report progress, then finish."""
        await ctx.report_progress(1, 2, "half")
        return "done"

    @server.tool
    def ask(ctx: rondo.Context) -> str:
        """Ask a form question."""
        answer = ctx.ask("q", elicit.form("Name?", {"type": "object",
                                                   "properties": {"n": {"type": "string"}},
                                                   "required": ["n"]}))
        return f"hi {answer.content['n']}"

    @server.prompt
    def greet(name: str) -> str:
        """Greet."""
        return f"Hello {name}"

    @server.completion
    def complete(ref: Any, argument: Any, context: Any) -> list[str]:
        prefix = (context or {}).get("prefix", "")  # the context's arguments
        return [prefix + argument["value"] + "-1"]

    return server


def test_construction_refuses_unknown_versions_and_targets() -> None:
    with pytest.raises(ValueError, match="unknown protocol version '1999-01-01'"):
        Client(make_server(), protocol="1999-01-01")
    with pytest.raises(TypeError, match="cannot connect to 42"):
        Client(42)


def test_connect_is_idempotent_and_use_after_close_is_refused() -> None:
    async def go() -> None:
        client = Client(make_server())
        await client.connect()
        await client.connect()  # a second connect is a no-op
        assert [t.name for t in await client.list_tools()] == ["work", "ask"]
        assert (await client.request("tools/list"))["tools"][0]["name"] == "work"
        await client.close()
        with pytest.raises(ClientError, match="not connected"):
            await client.request("tools/list")

    run(go())


def test_async_progress_and_notification_callbacks_are_awaited() -> None:
    progress: list[tuple[Any, ...]] = []
    notes: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        await asyncio.sleep(0)
        progress.append((done, total, message))

    async def on_notification(message: dict[str, Any]) -> None:
        notes.append(message["method"])

    async def go() -> str:
        async with Client(make_server(), on_notification=on_notification) as client:
            return (await client.call_tool("work", on_progress=on_progress)).text

    assert run(go()) == "done"
    assert progress == [(1, 2, "half")]
    assert "notifications/progress" in notes


def test_completion_sends_its_context() -> None:
    async def go() -> list[str]:
        async with Client(make_server()) as client:
            done = await client.complete({"type": "ref/prompt", "name": "greet"}, "name", "ad",
                                         context={"prefix": "x-"})
            return done.values

    assert run(go()) == ["x-ad-1"]


def test_listen_options_are_sent_and_legacy_refuses() -> None:
    async def go() -> dict[str, Any] | None:
        async with Client(make_server()) as client, client.listen(
                tools=True, prompts=True, resources=True, resource_uris=["mem://x"]) as sub:
            assert sub.__aiter__() is sub
            return sub.acknowledged

    acknowledged = run(go())
    assert acknowledged is not None and acknowledged.get("toolsListChanged") is True

    async def legacy() -> None:
        async with Client(make_server(), protocol="2025-11-25") as client, client.listen(tools=True):
            pass

    with pytest.raises(ClientError, match="needs a 2026-07-28 server"):
        run(legacy())


def test_a_finished_subscription_stays_finished() -> None:
    async def go() -> list[Any]:
        async with Client(make_server()) as client:
            sub = client.listen(tools=True)
            async with sub:
                pass
            return [note async for note in sub] + [note async for note in sub]

    assert run(go()) == []


def test_resume_refuses_what_cannot_be_resumed_and_unanswerable_requests() -> None:
    async def go() -> None:
        # Declared (manual mode) but no on_elicit installed: the handlers cannot answer it.
        async with Client(make_server(), capabilities={"elicitation": {"form": {}}}) as client:
            pending = await client.call_tool("ask", manual=True)
            assert isinstance(pending, PendingCall)
            with pytest.raises(InputRequiredError, match="^input request 'q' wants form, and no on_elicit handler "
                               "takes it$") as caught:
                await client.resume(pending)
            assert caught.value.reason == "unanswerable"
            wrong = PendingCall(method="tools/list", params={}, input_requests={},
                                  request_state=None, rounds=0)
            with pytest.raises(ValueError, match="cannot resume tools/list"):
                await client.resume(wrong)

    run(go())


@pytest.mark.parametrize(("answer", "match"), [
    ({"error": "nope"}, "malformed JSON-RPC error"),
    ({"error": {"code": "x"}}, "malformed JSON-RPC error"),
    ({"result": "not an object"}, "has no result object"),
    ({"result": {"resultType": "complete", "tools": "none"}}, "has no tools array"),
    ({"result": {"resultType": "complete", "tools": [], "nextCursor": 5}}, "nextCursor must be a string"),
])
def test_malformed_answers_are_protocol_errors(answer: dict[str, Any], match: str) -> None:
    async def go() -> None:
        async with Client(Scripted(lambda m: answer), protocol="2026-07-28") as client:
            await client.list_tools()

    with pytest.raises(ProtocolError, match=match):
        run(go())


def test_completion_without_a_completion_object_is_a_protocol_error() -> None:
    async def go() -> None:
        async with Client(Scripted(lambda m: {"result": {"resultType": "complete"}}),
                          protocol="2026-07-28") as client:
            await client.complete({"type": "ref/prompt", "name": "p"}, "a", "b")

    with pytest.raises(ProtocolError, match="no completion object"):
        run(go())


def test_a_stale_cursor_restarts_the_listing_once() -> None:
    calls: list[Any] = []

    def answer(message: dict[str, Any]) -> dict[str, Any]:
        cursor = message["params"].get("cursor")
        calls.append(cursor)
        if cursor == "c1" and calls.count("c1") == 1:
            return {"error": {"code": -32602, "message": "stale cursor"}}
        if cursor is None:
            return {"result": {"resultType": "complete", "tools": [{"name": "a", "inputSchema": {"type": "object"}}],
                               "nextCursor": "c1"}}
        return {"result": {"resultType": "complete", "tools": [{"name": "b", "inputSchema": {"type": "object"}}]}}

    async def go() -> list[str]:
        async with Client(Scripted(answer), protocol="2026-07-28") as client:
            return [t.name for t in await client.list_tools()]

    assert run(go()) == ["a", "b"]
    assert calls == [None, "c1", None, "c1"]
