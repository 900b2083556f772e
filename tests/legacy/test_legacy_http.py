"""Legacy (2025-11-25) sessions over Streamable HTTP, driven in-process through the ASGI app.

A tiny ASGI driver reads responses as they stream, so SSE streams, server-to-client requests,
disconnects and `Last-Event-ID` resumption are exercised without sockets. Every JSON-RPC message
the server sends is checked against the 2025-11-25 schema.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rondo  # noqa: E402
from rondo.legacy import LegacyConfig, close_stream  # noqa: E402
from rondo.transport.http import HttpApp  # noqa: E402
from rondo.transport.http.legacy import HttpState, _resume_point  # noqa: E402
from tests.legacy.test_legacy import ACCEPT_BLUE, COLOR, check, make_server  # noqa: E402

ERA = "2025-11-25"


class Exchange:
    """One HTTP request to the app, its response read incrementally."""

    def __init__(self, app: Any, method: str, headers: dict[str, str], body: Any = None) -> None:
        raw = b"" if body is None else msgspec.json.encode(body)
        hdrs = [(b"host", b"localhost")] + [(k.lower().encode(), v.encode()) for k, v in headers.items()]
        if body is not None:
            hdrs.append((b"content-type", b"application/json"))
        self.scope = {"type": "http", "method": method, "path": "/mcp", "headers": hdrs}
        self.body = raw
        self.sent: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.gone = asyncio.Event()
        self._delivered = False
        self.buffer = b""
        self.ended = False
        self.task = asyncio.ensure_future(app(self.scope, self._receive, self._send))

    async def _receive(self) -> dict[str, Any]:
        if not self._delivered:
            self._delivered = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def _send(self, message: dict[str, Any]) -> None:
        if self.gone.is_set():
            raise OSError("client went away")
        await self.sent.put(message)

    async def start(self) -> tuple[int, dict[str, str]]:
        message = await asyncio.wait_for(self.sent.get(), 5)
        assert message["type"] == "http.response.start"
        return message["status"], {k.decode(): v.decode() for k, v in message["headers"]}

    async def _more(self) -> bool:
        if self.ended:
            return False
        message = await asyncio.wait_for(self.sent.get(), 5)
        self.buffer += message.get("body", b"")
        if not message.get("more_body", False):
            self.ended = True
        return True

    async def read_all(self) -> bytes:
        while await self._more():
            pass
        return self.buffer

    async def json(self) -> Any:
        return msgspec.json.decode(await self.read_all())

    async def event(self) -> dict[str, str] | None:
        """The next SSE event as {field: value} (comments skipped); None when the stream ended."""
        while True:
            while b"\n\n" not in self.buffer:
                if not await self._more():
                    return None
            raw, self.buffer = self.buffer.split(b"\n\n", 1)
            fields: dict[str, str] = {}
            for line in raw.decode().split("\n"):
                if line.startswith(":"):
                    continue
                name, _, value = line.partition(":")
                fields[name] = value[1:] if value.startswith(" ") else value
            if fields:
                return fields

    async def message(self, method: str | None = None) -> dict[str, Any]:
        """The next event carrying data, decoded and schema-checked."""
        while True:
            event = await self.event()
            assert event is not None, "stream ended"
            if event.get("data"):
                msg = msgspec.json.decode(event["data"])
                check(msg, method if "method" not in msg else None)
                return msg

    def disconnect(self) -> None:
        self.gone.set()


class Session:
    """A handshake-era HTTP client for the tests."""

    def __init__(self, app: Any, capabilities: dict[str, Any] | None = None, version: str = ERA) -> None:
        self.app = app
        self.capabilities = {"elicitation": {}, "sampling": {}} if capabilities is None else capabilities
        self.version = version
        self.sid = ""
        self.ids = iter(range(1, 10_000))

    def headers(self, **extra: str) -> dict[str, str]:
        h = {"accept": "application/json, text/event-stream", "mcp-session-id": self.sid,
             "mcp-protocol-version": self.version}
        h.update(extra)
        return h

    async def open(self) -> dict[str, Any]:
        ex = Exchange(self.app, "POST", {"accept": "application/json, text/event-stream"}, {
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": self.version, "capabilities": self.capabilities,
                       "clientInfo": {"name": "t", "version": "1"}}})
        status, headers = await ex.start()
        body = await ex.json()
        assert status == 200, body
        check(body, "initialize")
        self.sid = headers["mcp-session-id"]
        ex = Exchange(self.app, "POST", self.headers(), {"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert (await ex.start())[0] == 202
        return body

    def post(self, msg: dict[str, Any]) -> Exchange:
        return Exchange(self.app, "POST", self.headers(), msg)

    def call(self, method: str, params: dict[str, Any] | None = None) -> tuple[int, Exchange]:
        rid = next(self.ids)
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        return rid, self.post(msg)

    async def result(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        rid, ex = self.call(method, params)
        status, headers = await ex.start()
        if headers["content-type"].startswith("application/json"):
            body = await ex.json()
        else:
            while True:
                body = await ex.message(method)
                if body.get("id") == rid and "method" not in body:
                    break
        check(body, method)
        assert status == 200 and "result" in body, body
        return body["result"]

    async def answer(self, rid: Any, result: dict[str, Any]) -> None:
        ex = self.post({"jsonrpc": "2.0", "id": rid, "result": result})
        assert (await ex.start())[0] == 202


def app_for(server: rondo.Server | None = None, **config: Any) -> HttpApp:
    return HttpApp(server or make_server(), legacy=LegacyConfig(**config) if config else True)


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 20))


# -- handshake and session lifecycle ------------------------------------------------------------


def test_initialize_issues_a_visible_ascii_session_id_and_lifecycle_works() -> None:
    async def go() -> None:
        app = app_for()
        client = Session(app)
        init = await client.open()
        assert init["result"]["protocolVersion"] == ERA
        assert client.sid and all(0x21 <= ord(c) <= 0x7E for c in client.sid)
        assert await client.result("ping") == {}
        ex = Exchange(app, "DELETE", client.headers())
        assert (await ex.start())[0] == 200
        _, ex = client.call("tools/list")
        status, _ = await ex.start()
        body = await ex.json()
        assert status == 404 and body["error"]["code"] == -32001
        check(body)
        assert len(app.legacy.sessions) == 0

    run(go())


def test_requests_without_a_session_are_400_and_unknown_sessions_404() -> None:
    async def go() -> None:
        app = app_for()
        ex = Exchange(app, "POST", {"accept": "application/json, text/event-stream"}, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        status, _ = await ex.start()
        body = await ex.json()
        assert status == 400 and body["error"]["code"] == -32000 and body["id"] == 1
        for method in ("GET", "DELETE"):
            ex = Exchange(app, method, {})
            assert (await ex.start())[0] == 400
            ex = Exchange(app, method, {"mcp-session-id": "nope", "accept": "text/event-stream"})
            assert (await ex.start())[0] == 404

    run(go())


def test_unsupported_version_header_on_a_session_is_400() -> None:
    async def go() -> None:
        app = app_for()
        client = Session(app)
        await client.open()
        ex = Exchange(app, "POST", client.headers(**{"mcp-protocol-version": "1999-01-01"}),
                      {"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert (await ex.start())[0] == 400

    run(go())


def test_both_eras_on_one_endpoint() -> None:
    async def go() -> None:
        app = app_for()
        client = Session(app)
        await client.open()
        legacy = await client.result("tools/list")
        assert "resultType" not in legacy
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}
        ex = Exchange(app, "POST", {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28",
                                    "mcp-method": "tools/list"},
                      {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"_meta": meta}})
        status, _ = await ex.start()
        modern = await ex.json()
        assert status == 200 and modern["result"]["resultType"] == "complete"
        # initialize with the 2026 header and _meta stays modern: a removed method there.
        ex = Exchange(app, "POST", {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", "mcp-method": "initialize"},
                      {"jsonrpc": "2.0", "id": 6, "method": "initialize", "params": {"_meta": meta}})
        status, _ = await ex.start()
        assert status == 404 and (await ex.json())["error"]["code"] == -32601
        assert len(app.legacy.sessions) == 1

    run(go())


def test_cap_evicts_the_least_recently_used_idle_session() -> None:
    async def go() -> None:
        app = app_for(max_sessions=2)
        first, second, third = Session(app), Session(app), Session(app)
        await first.open()
        await second.open()
        await first.result("ping")  # second is now the least recently used
        await third.open()
        assert len(app.legacy.sessions) == 2
        _, ex = second.call("ping")
        assert (await ex.start())[0] == 404
        assert await first.result("ping") == {}

    run(go())


# -- back-channel requests on the POST stream ---------------------------------------------------


@pytest.mark.parametrize("tool", ["sync_color", "async_color"])
def test_ask_goes_on_the_post_stream_and_the_answer_is_routed_back(tool: str) -> None:
    async def go() -> None:
        app = app_for()
        client = Session(app)
        await client.open()
        rid, ex = client.call("tools/call", {"name": tool, "arguments": {}})
        status, headers = await ex.start()
        assert status == 200 and headers["content-type"] == "text/event-stream"
        priming = await ex.event()
        assert priming is not None and priming["id"] and priming["data"] == "" and priming["retry"] == "1000"
        ask = await ex.message()
        assert ask["method"] == "elicitation/create" and ask["params"]["requestedSchema"] == COLOR["params"]["requestedSchema"]
        await client.answer(ask["id"], ACCEPT_BLUE)
        done = await ex.message("tools/call")
        assert done == {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "color=blue"}]}}
        assert await ex.event() is None  # the stream ends with the response
        assert app.legacy.sessions.get(client.sid).transport.streams == {}  # delivered: nothing kept

    run(go())


def test_older_clients_get_no_priming_event() -> None:
    async def go() -> None:
        client = Session(app_for(), version="2025-06-18")
        await client.open()
        _, ex = client.call("tools/call", {"name": "async_color", "arguments": {}})
        await ex.start()
        first = await ex.event()
        assert first is not None and first["data"] and "retry" not in first

    run(go())


def test_dropped_post_stream_is_resumed_with_last_event_id() -> None:
    async def go() -> None:
        app = app_for()
        client = Session(app)
        await client.open()
        rid, ex = client.call("tools/call", {"name": "sync_color", "arguments": {}})
        await ex.start()
        priming = await ex.event()
        ask = await ex.message()
        assert priming is not None
        ex.disconnect()  # the connection drops; the request keeps running (2025-11-25)
        await client.answer(ask["id"], ACCEPT_BLUE)
        resumed = Exchange(app, "GET", client.headers(**{"accept": "text/event-stream", "last-event-id": priming["id"]}))
        status, _ = await resumed.start()
        assert status == 200
        replay = await resumed.message()
        assert replay["id"] == ask["id"] and replay["method"] == "elicitation/create"  # replayed after the id
        done = await resumed.message("tools/call")
        assert done["id"] == rid and done["result"]["content"][0]["text"] == "color=blue"
        assert await resumed.event() is None

    run(go())


def test_close_stream_lets_the_client_poll_for_the_result() -> None:
    server = rondo.Server("polling")

    @server.tool
    async def long_job(ctx: rondo.Context) -> str:
        close_stream(ctx)
        await asyncio.sleep(0.05)
        await ctx.report_progress(1, 1)
        return "finished"

    async def go() -> None:
        app = app_for(server, retry_ms=250)
        client = Session(app)
        await client.open()
        rid, ex = client.call("tools/call", {"name": "long_job", "arguments": {}, "_meta": {"progressToken": 7}})
        await ex.start()
        priming = await ex.event()
        assert priming is not None and priming["data"] == "" and priming["retry"] == "250"
        assert await ex.event() is None  # closed before the result
        resumed = Exchange(app, "GET", client.headers(**{"accept": "text/event-stream", "last-event-id": priming["id"]}))
        assert (await resumed.start())[0] == 200
        progress = await resumed.message()
        assert progress["method"] == "notifications/progress" and progress["params"]["progressToken"] == 7
        done = await resumed.message("tools/call")
        assert done == {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "finished"}]}}

    run(go())


def test_answer_posts_are_202_even_when_nobody_waits() -> None:
    async def go() -> None:
        client = Session(app_for())
        await client.open()
        await client.answer(12345, {"action": "cancel"})

    run(go())


def test_delete_ends_waiting_questions() -> None:
    async def go() -> None:
        app = app_for()
        client = Session(app)
        await client.open()
        _, ex = client.call("tools/call", {"name": "slow", "arguments": {}})
        await ex.start()
        await ex.event()
        await ex.message()  # the question
        session = app.legacy.sessions.get(client.sid)
        assert session.pending
        assert (await Exchange(app, "DELETE", client.headers()).start())[0] == 200
        assert await ex.event() is None  # its stream is ended, no response follows
        assert session.closed and not session.pending and not session.inflight

    run(go())


# -- the standalone GET stream ------------------------------------------------------------------


def test_get_stream_carries_list_changes_and_resource_updates() -> None:
    async def go() -> None:
        server = make_server()
        app = app_for(server)
        client = Session(app)
        await client.open()
        stream = Exchange(app, "GET", client.headers(accept="text/event-stream"))
        status, headers = await stream.start()
        assert status == 200 and headers["content-type"] == "text/event-stream"
        priming = await stream.event()
        assert priming is not None and priming["data"] == ""
        assert await client.result("resources/subscribe", {"uri": "test://watched"}) == {}
        await client.result("tools/call", {"name": "touch", "arguments": {"uri": "test://watched"}})
        update = await stream.message()
        assert update == {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "test://watched"}}
        server.notify_prompts_changed()
        changed = await stream.message()
        assert changed == {"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}
        # A session with a live stream is busy: it does not expire while connected.
        assert app.legacy.sessions.get(client.sid).busy
        stream.disconnect()
        async with asyncio.timeout(5):  # polled with a deadline, not slept on
            while app.legacy.sessions.get(client.sid).busy:
                await asyncio.sleep(0.005)

    run(go())


def test_get_needs_event_stream_accept() -> None:
    async def go() -> None:
        app = app_for()
        client = Session(app)
        await client.open()
        ex = Exchange(app, "GET", client.headers(accept="application/json"))
        assert (await ex.start())[0] == 406

    run(go())


def test_modern_only_app_rejects_legacy() -> None:
    async def go() -> None:
        app = HttpApp(make_server(), legacy=False)
        ex = Exchange(app, "POST", {"accept": "application/json, text/event-stream"}, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                        "params": {"protocolVersion": ERA, "capabilities": {}}})
        assert (await ex.start())[0] == 400
        assert (await Exchange(app, "GET", {}).start())[0] == 405

    run(go())


# -- event ids ----------------------------------------------------------------------------------


@given(st.text(max_size=20))
def test_resume_point_never_crashes_and_only_names_known_positions(last: str) -> None:
    state = HttpState()
    stream = state.open_stream()
    stream.push({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": 1}})
    found, position = _resume_point(state, last)
    if found is not None:
        assert found is stream and 0 <= position <= stream.seq


@given(st.integers(min_value=0, max_value=5))
def test_resume_point_round_trips_event_ids(seq: int) -> None:
    state = HttpState()
    stream = state.open_stream()
    for _ in range(5):
        stream.push({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}})
    found, position = _resume_point(state, stream.event_id(seq))
    assert found is stream and position == seq
    assert len(stream.after(position)) == 5 - seq
