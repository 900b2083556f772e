"""The 2025-11-25 era through the transport-free dialect (memory link) and stdio.

Every message the server emits is validated against the official 2025-11-25 schema as it
arrives (`LegacyClient`), so a shape error fails the test that produced it.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import rondo  # noqa: E402
from rondo import InputRequired, elicit, roots, sampling  # noqa: E402
from rondo.legacy import ClientCannotAnswer  # noqa: E402
from rondo.legacy.sessions import (  # noqa: E402
    LegacyConfig,
    LegacySession,
    SessionLimit,
    SessionTable,
    negotiate,
)
from rondo.transport.memory import MemoryConnection  # noqa: E402
from rondo.wire.meta import LEGACY_VERSIONS  # noqa: E402
from tests.helpers.polling import until  # noqa: E402
from tests.helpers.wire_schema import violations  # noqa: E402

ERA = "2025-11-25"
ROOT = Path(__file__).resolve().parents[1].parent

COLOR = elicit.form(
    "Which color?",
    {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
)


def make_server() -> rondo.Server:
    server = rondo.Server("legacy-test", "1.0.0", instructions="for tests")

    @server.tool
    def sync_color(ctx: rondo.Context) -> str:
        """Sync handler: ctx.ask blocks its worker thread until the answer arrives."""
        answer = ctx.ask("color", COLOR)
        return f"color={answer.content['color']}" if answer.accepted else f"action={answer.action}"

    @server.tool
    async def async_color(ctx: rondo.Context) -> str:
        """Async handler: ctx.ask is awaited."""
        answer = await ctx.ask("color", COLOR)
        return f"color={answer.content['color']}"

    @server.tool
    def everything(ctx: rondo.Context) -> str:
        """Three kinds at once."""
        got = ctx.ask_all(
            {
                "color": COLOR,
                "greeting": sampling.create_message(["Say hi"], 20),
                "roots": roots.list(),
            }
        )
        return f"{got['color'].content['color']}|{got['greeting'].text}|{len(got['roots'])}"

    @server.tool
    async def consent(ctx: rondo.Context) -> str:
        """URL elicitation."""
        answer = await ctx.ask("consent", elicit.url("Connect", "https://example.com/connect"))
        return f"consent={answer.action}"

    @server.tool
    def explicit(ctx: rondo.Context) -> Any:
        """The explicit result: answered over the back-channel on a legacy session."""
        answer = ctx.input_responses.get("color")
        if answer is None:
            return InputRequired(input_requests={"color": COLOR})
        return f"explicit color={answer['content']['color']}"

    @server.tool
    def numbers() -> list[int]:
        """Structured output that is not an object."""
        return [1, 2, 3]

    @server.tool
    def point() -> dict[str, int]:
        """Structured output that is an object."""
        return {"x": 1}

    @server.tool
    async def chatty(ctx: rondo.Context) -> str:
        """Logs at two levels and reports progress."""
        await ctx.debug("debug line")
        await ctx.warning("warning line")
        await ctx.report_progress(1, 2, "half")
        return "done"

    @server.tool
    async def slow(ctx: rondo.Context) -> str:
        """Waits for a question that may be cancelled."""
        await ctx.ask("color", COLOR)
        return "answered"

    @server.tool
    def touch(uri: str) -> str:
        """Tells subscribers that `uri` changed."""
        server.notify_resource_updated(uri)
        return "touched"

    @server.resource("test://watched", name="watched", mime_type="text/plain")
    def watched() -> str:
        return "watched content"

    @server.resource("test://item/{id}", name="item", mime_type="text/plain")
    def item(id: str) -> str:
        return f"item {id}"

    @server.prompt
    def poem(ctx: rondo.Context) -> str:
        """A prompt that asks first."""
        answer = ctx.ask("color", COLOR)
        return f"A poem about {answer.content['color']}"

    @server.completion
    def complete(ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]) -> list[str]:
        return ["a", "b"]

    return server


def check(message: dict[str, Any], method: str | None = None) -> None:
    problems = violations(message, era=ERA, method=method)
    assert not problems, f"{message}: {problems}"


class LegacyClient:
    """A handshake-era client over the in-memory link that answers server requests with `answers`."""

    def __init__(self, server: rondo.Server, *, capabilities: dict[str, Any] | None = None,
                 version: str = ERA) -> None:
        self.conn = MemoryConnection(server)
        self.capabilities = {"elicitation": {}, "sampling": {}, "roots": {}} if capabilities is None else capabilities
        self.version = version
        self.answers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}
        self.seen: list[dict[str, Any]] = []  # every server message, in order
        self.outside: list[dict[str, Any]] = []
        self.conn.on_message = self._outside
        self.ids = iter(range(1, 10_000))

    def _outside(self, msg: dict[str, Any]) -> None:
        check(msg)
        self.outside.append(msg)

    async def initialize(self) -> dict[str, Any]:
        response = await self.conn.send({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": self.version, "capabilities": self.capabilities,
                       "clientInfo": {"name": "test", "version": "1"}},
        })
        assert response is not None
        check(response, "initialize")
        await self.conn.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response

    def _on(self, msg: dict[str, Any]) -> None:
        check(msg)
        self.seen.append(msg)
        if "id" in msg and "method" in msg:
            answer = self.answers.get(msg["method"])
            if answer is not None:
                reply = {"jsonrpc": "2.0", "id": msg["id"], "result": answer(msg["params"])}
                asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(self.conn.send(reply)))

    async def request(self, method: str, params: dict[str, Any] | None = None, rid: int | None = None) -> dict[str, Any]:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self.ids) if rid is None else rid, "method": method}
        if params is not None:
            msg["params"] = params
        response = await self.conn.send(msg, self._on)
        assert response is not None
        check(response, method)
        return response

    async def result(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        response = await self.request(method, params)
        assert "result" in response, response
        return response["result"]


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 20))


ACCEPT_BLUE = {"action": "accept", "content": {"color": "blue"}}
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m", "stopReason": "endTurn"}
ROOTS = {"roots": [{"uri": "file:///work", "name": "work"}]}


# -- handshake -------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2025-03-26"])
def test_initialize_answers_the_clients_version(version: str) -> None:
    async def go() -> None:
        client = LegacyClient(make_server(), version=version)
        result = (await client.initialize())["result"]
        assert result["protocolVersion"] == version
        assert result["serverInfo"] == {"name": "legacy-test", "version": "1.0.0"}
        assert result["instructions"] == "for tests"
        caps = result["capabilities"]
        assert caps["resources"]["subscribe"] is True and "logging" in caps and "completions" in caps
        assert "resultType" not in result

    run(go())


def test_initialize_with_unknown_or_modern_version_gets_newest_legacy() -> None:
    async def go() -> None:
        for asked in ("2026-07-28", "1999-01-01"):
            client = LegacyClient(make_server(), version=asked)
            assert (await client.initialize())["result"]["protocolVersion"] == "2025-11-25"

    run(go())


@given(st.one_of(st.sampled_from(LEGACY_VERSIONS), st.text(max_size=12), st.none(), st.integers()))
def test_negotiate_always_answers_a_legacy_version(requested: Any) -> None:
    answered = negotiate(requested)
    assert answered in LEGACY_VERSIONS
    assert answered == (requested if requested in LEGACY_VERSIONS else "2025-11-25")


def test_second_initialize_is_refused() -> None:
    async def go() -> None:
        client = LegacyClient(make_server())
        await client.initialize()
        response = await client.request("initialize", {"protocolVersion": ERA, "capabilities": {}})
        assert response["error"]["code"] == -32600

    run(go())


# -- utilities --------------------------------------------------------------------------------


def test_ping_and_set_level_are_exactly_empty() -> None:
    async def go() -> None:
        client = LegacyClient(make_server())
        await client.initialize()
        assert await client.result("ping") == {}
        assert await client.result("logging/setLevel", {"level": "warning"}) == {}
        bad = await client.request("logging/setLevel", {"level": "loud"})
        assert bad["error"]["code"] == -32602

    run(go())


def test_logs_only_at_or_above_the_session_level_and_progress_flows() -> None:
    async def go() -> None:
        client = LegacyClient(make_server())
        await client.initialize()
        await client.result("tools/call", {"name": "chatty", "arguments": {}})
        assert not [m for m in client.seen if m["method"] == "notifications/message"]  # no level yet
        await client.result("logging/setLevel", {"level": "warning"})
        client.seen.clear()
        await client.result("tools/call", {"name": "chatty", "arguments": {}, "_meta": {"progressToken": "p"}})
        logs = [m["params"] for m in client.seen if m["method"] == "notifications/message"]
        assert logs == [{"level": "warning", "data": "warning line"}]
        progress = [m["params"] for m in client.seen if m["method"] == "notifications/progress"]
        assert progress == [{"progressToken": "p", "progress": 1, "total": 2, "message": "half"}]

    run(go())


def test_modern_only_methods_are_not_found_on_legacy() -> None:
    async def go() -> None:
        client = LegacyClient(make_server())
        await client.initialize()
        for method in ("server/discover", "subscriptions/listen"):
            assert (await client.request(method, {}))["error"]["code"] == -32601

    run(go())


# -- results ------------------------------------------------------------------------------------


def test_lists_and_reads_have_no_modern_keys() -> None:
    async def go() -> None:
        client = LegacyClient(make_server())
        await client.initialize()
        for method in ("tools/list", "resources/list", "resources/templates/list", "prompts/list"):
            result = await client.result(method)
            assert not {"resultType", "ttlMs", "cacheScope"} & set(result), method
        read = await client.result("resources/read", {"uri": "test://item/7"})
        assert read == {"contents": [{"uri": "test://item/7", "mimeType": "text/plain", "text": "item 7"}]}
        done = await client.result("completion/complete", {
            "ref": {"type": "ref/resource", "uri": "test://item/{id}"}, "argument": {"name": "id", "value": ""}})
        assert done["completion"]["values"] == ["a", "b"]

    run(go())


def test_non_object_structured_output_is_dropped_object_kept() -> None:
    async def go() -> None:
        client = LegacyClient(make_server())
        await client.initialize()
        tools = {t["name"]: t for t in (await client.result("tools/list"))["tools"]}
        assert "outputSchema" not in tools["numbers"]
        assert tools["point"]["outputSchema"]["type"] == "object"
        numbers = await client.result("tools/call", {"name": "numbers", "arguments": {}})
        assert "structuredContent" not in numbers and json.loads(numbers["content"][0]["text"]) == [1, 2, 3]
        point = await client.result("tools/call", {"name": "point", "arguments": {}})
        assert point["structuredContent"] == {"x": 1}

    run(go())


def test_resource_not_found_is_32002_with_uri() -> None:
    async def go() -> None:
        client = LegacyClient(make_server())
        await client.initialize()
        error = (await client.request("resources/read", {"uri": "test://nope"}))["error"]
        assert error["code"] == -32002 and error["data"] == {"uri": "test://nope"}

    run(go())


def test_explicit_input_required_fails_naming_the_modern_version() -> None:
    # The client did not declare elicitation: it cannot answer, so the seeds' rule applies.
    async def go() -> None:
        client = LegacyClient(make_server(), capabilities={"sampling": {}})
        await client.initialize()
        error = (await client.request("tools/call", {"name": "explicit", "arguments": {}}))["error"]
        assert error["code"] == -32603 and "2026-07-28" in error["message"]

    run(go())


# -- subscriptions and list changes ----------------------------------------------------------


def test_subscribe_gets_updates_until_unsubscribed_and_list_changes_reach_everyone() -> None:
    async def go() -> None:
        server = make_server()
        client = LegacyClient(server)
        await client.initialize()
        assert await client.result("resources/subscribe", {"uri": "test://watched"}) == {}
        await client.result("tools/call", {"name": "touch", "arguments": {"uri": "test://watched"}})
        await client.result("tools/call", {"name": "touch", "arguments": {"uri": "test://other"}})
        updates = [m for m in client.outside if m["method"] == "notifications/resources/updated"]
        assert [u["params"]["uri"] for u in updates] == ["test://watched"]
        assert await client.result("resources/unsubscribe", {"uri": "test://watched"}) == {}
        await client.result("tools/call", {"name": "touch", "arguments": {"uri": "test://watched"}})
        assert len([m for m in client.outside if m["method"] == "notifications/resources/updated"]) == 1
        server.notify_tools_changed()
        await asyncio.sleep(0)
        assert client.outside[-1] == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}

    run(go())


# -- ctx.ask over the back-channel -------------------------------------------------------------


@pytest.mark.parametrize("tool", ["sync_color", "async_color"])
def test_ask_sends_elicitation_and_returns_the_answer(tool: str) -> None:
    async def go() -> None:
        client = LegacyClient(make_server())
        client.answers["elicitation/create"] = lambda params: ACCEPT_BLUE
        await client.initialize()
        result = await client.result("tools/call", {"name": tool, "arguments": {}})
        assert result["content"][0]["text"] == "color=blue"
        asks = [m for m in client.seen if m.get("method") == "elicitation/create"]
        assert len(asks) == 1 and asks[0]["params"]["message"] == "Which color?"
        assert asks[0]["params"]["mode"] == "form"

    run(go())


def test_prompt_asks_too() -> None:
    async def go() -> None:
        client = LegacyClient(make_server())
        client.answers["elicitation/create"] = lambda params: ACCEPT_BLUE
        await client.initialize()
        result = await client.result("prompts/get", {"name": "poem"})
        assert result["messages"][0]["content"]["text"] == "A poem about blue"

    run(go())


def test_ask_all_sends_every_kind_at_once() -> None:
    async def go() -> None:
        client = LegacyClient(make_server())
        client.answers.update({
            "elicitation/create": lambda p: ACCEPT_BLUE,
            "sampling/createMessage": lambda p: SAMPLED,
            "roots/list": lambda p: ROOTS,
        })
        await client.initialize()
        result = await client.result("tools/call", {"name": "everything", "arguments": {}})
        assert result["content"][0]["text"] == "blue|hi|1"
        methods = [m["method"] for m in client.seen if "id" in m and "method" in m]
        assert sorted(methods) == ["elicitation/create", "roots/list", "sampling/createMessage"]
        assert len({m["id"] for m in client.seen if "id" in m}) == 3  # distinct request ids

    run(go())


def test_url_elicitation_carries_an_elicitation_id() -> None:
    async def go() -> None:
        client = LegacyClient(make_server(), capabilities={"elicitation": {"url": {}}})
        client.answers["elicitation/create"] = lambda p: {"action": "accept"}
        await client.initialize()
        result = await client.result("tools/call", {"name": "consent", "arguments": {}})
        assert result["content"][0]["text"] == "consent=accept"
        ask = next(m for m in client.seen if m.get("method") == "elicitation/create")
        assert ask["params"]["mode"] == "url" and isinstance(ask["params"]["elicitationId"], str)

    run(go())


def test_older_clients_get_form_elicitation_without_mode() -> None:
    async def go() -> None:
        client = LegacyClient(make_server(), version="2025-06-18")
        client.answers["elicitation/create"] = lambda p: ACCEPT_BLUE
        await client.initialize()
        await client.result("tools/call", {"name": "async_color", "arguments": {}})
        ask = next(m for m in client.seen if m.get("method") == "elicitation/create")
        assert "mode" not in ask["params"]

    run(go())


def test_missing_capability_is_a_clear_tool_error() -> None:
    async def go() -> None:
        client = LegacyClient(make_server(), capabilities={"elicitation": {}})
        await client.initialize()
        result = await client.result("tools/call", {"name": "everything", "arguments": {}})
        assert result["isError"] is True
        assert "did not declare" in result["content"][0]["text"] and "sampling" in result["content"][0]["text"]
        assert not [m for m in client.seen if "id" in m]  # nothing was sent to the client

    run(go())


def test_missing_capability_reaches_the_handler_as_an_exception() -> None:
    server = rondo.Server("caught")
    seen: list[Exception] = []

    @server.tool
    async def careful(ctx: rondo.Context) -> str:
        try:
            await ctx.ask("s", sampling.create_message(["x"], 5))
        except ClientCannotAnswer as exc:
            seen.append(exc)
            return "fallback"
        return "sampled"

    async def go() -> None:
        client = LegacyClient(server, capabilities={})
        await client.initialize()
        result = await client.result("tools/call", {"name": "careful", "arguments": {}})
        assert result["content"][0]["text"] == "fallback"
        assert seen and seen[0].missing == {"sampling": {}}

    run(go())


def test_malformed_answer_is_invalid_params() -> None:
    async def go() -> None:
        client = LegacyClient(make_server())
        client.answers["elicitation/create"] = lambda p: {"action": "accept", "content": {"color": 5}}
        await client.initialize()
        error = (await client.request("tools/call", {"name": "async_color", "arguments": {}}))["error"]
        assert error["code"] == -32602 and "color" in error["message"]

    run(go())


def test_client_error_answer_becomes_a_tool_error() -> None:
    async def go() -> None:
        server = make_server()
        client = LegacyClient(server)
        await client.initialize()

        def refuse(msg: dict[str, Any]) -> None:
            check(msg)
            if msg.get("method") == "elicitation/create":
                reply = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -1, "message": "user closed"}}
                asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(client.conn.send(reply)))

        response = await client.conn.send(
            {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "async_color", "arguments": {}}},
            refuse,
        )
        assert response is not None and response["result"]["isError"] is True
        assert "user closed" in response["result"]["content"][0]["text"]

    run(go())


def asking(server: rondo.Server, tool: str, call_id: int, **options: Any) -> tuple[Any, list[dict[str, Any]], Any]:
    """A legacy session on a `Connection` whose client declares elicitation, with `tool`
    called as request `call_id`: (the pipe, every message the server sent, the call's task)."""
    from rondo.transport.connection import Connection

    sent: list[dict[str, Any]] = []
    pipe = Connection(server, sent.append, **options)
    pipe.feed({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": ERA, "capabilities": {"elicitation": {}}}})
    task = pipe.feed({"jsonrpc": "2.0", "id": call_id, "method": "tools/call",
                      "params": {"name": tool, "arguments": {}}})
    assert task is not None
    return pipe, sent, task


def test_ask_timeout_cancels_the_question() -> None:
    server = make_server()

    async def go() -> None:
        pipe, sent, task = asking(server, "async_color", 1, legacy=LegacyConfig(ask_timeout=0.05))
        await task
        for msg in sent:
            check(msg)
        ask = next(m for m in sent if m.get("method") == "elicitation/create")
        cancel = next(m for m in sent if m.get("method") == "notifications/cancelled")
        assert cancel["params"]["requestId"] == ask["id"]
        result = sent[-1]["result"]
        assert result["isError"] is True and "did not answer" in result["content"][0]["text"]
        assert not pipe.session.pending
        pipe.close()

    run(go())


def test_client_cancelling_the_call_cancels_the_question_and_sends_no_response() -> None:
    server = make_server()

    async def go() -> None:
        pipe, sent, task = asking(server, "sync_color", 9)
        await until(lambda: any(m.get("method") == "elicitation/create" for m in sent), 5,
                    "the question was never sent")
        pipe.feed({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}})
        await asyncio.gather(task, return_exceptions=True)
        await until(lambda: not pipe.session.pending, 5, "the question was never dropped")
        assert not [m for m in sent if m.get("id") == 9 and "method" not in m]
        pipe.close()

    run(go())


def test_session_end_fails_pending_questions() -> None:
    server = make_server()

    async def go() -> None:
        pipe, _, task = asking(server, "slow", 1)
        await until(lambda: pipe.session is not None and pipe.session.pending, 5,
                    "the question was never asked")
        pipe.close()
        await asyncio.gather(task, return_exceptions=True)
        assert pipe.session.closed and not pipe.session.pending

    run(go())


# -- the session table ------------------------------------------------------------------------


def _session(sid: str) -> LegacySession:
    return LegacySession(sid, ERA, {}, None, None)


def test_table_evicts_least_recently_used_idle_session_at_the_cap() -> None:
    table = SessionTable(max_sessions=3, idle_timeout=600)
    sessions = [_session(f"s{i}") for i in range(3)]
    for s in sessions:
        table.add(s)
    assert table.get("s0") is sessions[0]  # s0 is now the most recently used
    table.add(_session("s3"))
    assert len(table) == 3 and table.get("s1") is None and sessions[1].closed
    assert table.get("s0") is sessions[0]


def test_table_refuses_when_every_session_is_busy() -> None:
    table = SessionTable(max_sessions=2, idle_timeout=600)
    for sid in ("a", "b"):
        s = _session(sid)
        s.inflight = {1: object()}  # type: ignore[dict-item]
        table.add(s)
    with pytest.raises(SessionLimit, match="^Too many active sessions: try again later$") as full:
        table.add(_session("c"))
    assert full.value.code == -32000


def test_table_expires_idle_sessions_but_not_busy_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    table = SessionTable(max_sessions=10, idle_timeout=60)
    idle, busy = _session("idle"), _session("busy")
    busy.inflight = {1: object()}  # type: ignore[dict-item]
    table.add(idle)
    table.add(busy)
    now[0] += 61
    assert table.get("idle") is None and idle.closed
    assert table.get("busy") is busy and not busy.closed


def test_config_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="max_sessions must be at least 1"):
        LegacyConfig(max_sessions=0)
    with pytest.raises(ValueError, match="unknown log level 'loud'"):
        LegacyConfig(log_level="loud")


# -- stdio --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_stdio_serves_legacy_after_initialize_and_modern_beside_it() -> None:
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "preferences.py"), "--stdio"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(msg: dict[str, Any]) -> None:
        proc.stdin.write(json.dumps(msg) + "\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    def recv() -> dict[str, Any]:
        msg = json.loads(proc.stdout.readline())  # type: ignore[union-attr]
        return msg

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": ERA, "capabilities": {"elicitation": {}}, "clientInfo": {"name": "t", "version": "1"}}})
        init = recv()
        check(init, "initialize")
        assert init["result"]["protocolVersion"] == ERA
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "favorite_color", "arguments": {"user": "ann"}}})
        ask = recv()
        check(ask)
        assert ask["method"] == "elicitation/create"
        send({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"color": "green"}}})
        done = recv()
        check(done, "tools/call")
        assert done == {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "ann likes green."}]}}
        send({"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}})
        discover = recv()
        assert discover["result"]["resultType"] == "complete"
    finally:
        proc.stdin.close()
        proc.wait(10)
    assert proc.returncode == 0


def test_conformance_fixture_lists_validate_on_legacy() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("conformance_fixture", ROOT / "conformance" / "server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    async def go() -> None:
        client = LegacyClient(module.server)
        await client.initialize()
        tools = (await client.result("tools/list"))["tools"]
        schema_tool = next(t for t in tools if t["name"] == "json_schema_2020_12_tool")
        assert schema_tool["inputSchema"]["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        for method in ("prompts/list", "resources/list", "resources/templates/list"):
            await client.result(method)
        client.answers["elicitation/create"] = lambda p: {"action": "accept", "content": {
            "name": "Jane", "age": 25, "score": 88.5, "status": "inactive", "verified": False}}
        result = await client.result("tools/call", {"name": "test_elicitation_sep1034_defaults", "arguments": {}})
        assert "action=accept" in result["content"][0]["text"]

    run(go())
