"""Notifications scoped to a request (progress, log messages), cancellation, and
`subscriptions/listen` (spec digest §7.5-§7.8), over the in-memory transport."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import rondo
from tests.helpers.helpers_core import (
    INVALID_PARAMS,
    LOG_LEVEL,
    SUB_ID,
    Client,
    check,
    request,
    run,
)


def make_server() -> rondo.Server:
    server = rondo.Server("notes", state=None)

    @server.tool
    async def work(ctx: rondo.Context) -> str:
        """Report progress and log at every level."""
        for step in (1, 2, 3):
            await ctx.report_progress(step, 3, f"step {step}")
        for level in ("debug", "info", "warning", "error"):
            await ctx.log(level, {"level": level}, logger="work")
        return "done"

    @server.tool
    def sync_work(ctx: rondo.Context) -> str:
        """The same, called without await."""
        ctx.report_progress(0.5)
        ctx.info("half way")
        return "done"

    @server.tool
    def token(ctx: rondo.Context) -> str:
        """Echo the progress token."""
        return repr(ctx.progress_token)

    @server.prompt
    def p() -> str:
        """P."""
        return "x"

    @server.resource("mem://watched")
    def watched() -> str:
        return "w"

    return server


@pytest.fixture
def client() -> Client:
    return Client(make_server())


def methods(notes: list[dict]) -> list[str]:
    return [n["method"] for n in notes]


# -- progress ---------------------------------------------------------------------------------------


def test_no_progress_without_a_token(client):
    client.tool("work")
    assert "notifications/progress" not in methods(client.notes)


@pytest.mark.parametrize("token", ["p-1", 7])
def test_progress_with_a_token(client, token):
    client.tool("work", progressToken=token)
    progress = [n["params"] for n in client.notes if n["method"] == "notifications/progress"]
    assert progress == [
        {"progressToken": token, "progress": step, "total": 3, "message": f"step {step}"}
        for step in (1, 2, 3)
    ]


def test_progress_token_is_visible_to_the_handler(client):
    assert client.tool("token", progressToken="abc")["content"][0]["text"] == "'abc'"
    assert client.tool("token")["content"][0]["text"] == "None"


# -- logging ----------------------------------------------------------------------------------------


def test_no_log_messages_without_a_log_level(client):
    client.tool("work", progressToken="t")
    assert "notifications/message" not in methods(client.notes)


@pytest.mark.parametrize(
    ("level", "expected"),
    [
        ("debug", ["debug", "info", "warning", "error"]),
        ("info", ["info", "warning", "error"]),
        ("notice", ["warning", "error"]),
        ("error", ["error"]),
        ("emergency", []),
    ],
)
def test_log_messages_at_or_above_the_requested_level(client, level, expected):
    client.tool("work", **{LOG_LEVEL: level})
    logs = [n["params"] for n in client.notes if n["method"] == "notifications/message"]
    assert [m["level"] for m in logs] == expected
    assert all(m["logger"] == "work" and m["data"] == {"level": m["level"]} for m in logs)


def test_sync_handlers_emit_too(client):
    client.tool("sync_work", progressToken=1, **{LOG_LEVEL: "info"})
    assert methods(client.notes) == ["notifications/progress", "notifications/message"]


def test_notifications_precede_nothing_after_the_response(client):
    """Everything a request emits belongs to it: nothing arrives on a later request."""
    client.tool("work", progressToken="x", **{LOG_LEVEL: "debug"})
    client.result("tools/list")
    assert client.notes == []


# -- cancellation (memory transport) ---------------------------------------------------------------


def test_cancelled_request_sends_nothing_and_stops():
    server = rondo.Server("cancel", state=None)
    started = asyncio.Event
    seen: dict[str, Any] = {}

    @server.tool
    async def wait(ctx: rondo.Context) -> str:
        """Wait until cancelled."""
        seen["started"].set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen["cancelled"] = True
            raise
        return "finished"

    from rondo.testing import connect

    async def scenario() -> Any:
        seen["started"] = started()
        conn = connect(server)
        message = request("tools/call", {"name": "wait"}, id="w1")
        pending = asyncio.ensure_future(conn.send(message))
        await seen["started"].wait()
        await conn.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": "w1", "reason": "test"}})
        return await asyncio.wait_for(pending, 5)

    assert run(scenario()) is None
    assert seen["cancelled"] is True


# -- subscriptions/listen ---------------------------------------------------------------------------


async def listen(server: rondo.Server, flt: dict[str, Any], rid: Any = "L1"):
    """Open a listen stream; returns (connection, notes list, task) once acknowledged."""
    from rondo.testing import connect

    conn = connect(server)
    notes: list[dict[str, Any]] = []
    got = asyncio.Event()

    def on_note(note: dict[str, Any]) -> None:
        check(note)
        notes.append(note)
        got.set()

    task = asyncio.ensure_future(
        conn.send(request("subscriptions/listen", {"notifications": flt}, id=rid), on_note)
    )
    await asyncio.wait_for(got.wait(), 2)
    return conn, notes, task


def test_listen_acknowledges_first_with_the_honoured_subset():
    server = make_server()

    async def scenario() -> list[dict]:
        conn, notes, task = await listen(
            server,
            {"toolsListChanged": True, "promptsListChanged": False, "resourcesListChanged": True,
             "resourceSubscriptions": ["mem://watched"], "somethingElse": True},
        )
        await conn.close()
        await asyncio.gather(task, return_exceptions=True)
        return notes

    notes = run(scenario())
    assert notes[0] == {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {
            "_meta": {SUB_ID: "L1"},
            "notifications": {"toolsListChanged": True, "resourcesListChanged": True,
                              "resourceSubscriptions": ["mem://watched"]},
        },
    }


def test_listen_omits_what_the_server_cannot_honour():
    server = rondo.Server("tools-only", state=None)
    server.tool(name="t", description="T")(lambda: "x")

    async def scenario() -> list[dict]:
        conn, notes, task = await listen(
            server, {"toolsListChanged": True, "promptsListChanged": True,
                     "resourceSubscriptions": ["mem://x"]}, rid=9)
        await conn.close()
        await asyncio.gather(task, return_exceptions=True)
        return notes

    (ack,) = run(scenario())
    assert ack["params"] == {"_meta": {SUB_ID: 9}, "notifications": {"toolsListChanged": True}}


def test_list_changed_fan_out_follows_each_filter():
    server = make_server()

    async def scenario() -> tuple[list[dict], list[dict], list[dict]]:
        a = await listen(server, {"toolsListChanged": True}, rid="A")
        b = await listen(server, {"promptsListChanged": True,
                                  "resourceSubscriptions": ["mem://watched"]}, rid=2)
        c = await listen(server, {}, rid="C")
        server.notify_tools_changed()
        server.tool(name="added", description="Added")(lambda: "x")  # registering notifies too
        server.notify_prompts_changed()
        server.notify_resources_changed()
        server.notify_resource_updated("mem://watched")
        server.notify_resource_updated("mem://watched/child")
        server.notify_resource_updated("mem://other")
        await asyncio.sleep(0)
        for conn, _, task in (a, b, c):
            await conn.close()
            await asyncio.gather(task, return_exceptions=True)
        return a[1], b[1], c[1]

    a, b, c = run(scenario())
    assert methods(a) == ["notifications/subscriptions/acknowledged",
                          "notifications/tools/list_changed", "notifications/tools/list_changed"]
    assert all(n["params"]["_meta"] == {SUB_ID: "A"} for n in a)
    assert methods(b) == ["notifications/subscriptions/acknowledged",
                          "notifications/prompts/list_changed",
                          "notifications/resources/updated", "notifications/resources/updated"]
    assert [n["params"].get("uri") for n in b[2:]] == ["mem://watched", "mem://watched/child"]
    assert all(n["params"]["_meta"] == {SUB_ID: 2} for n in b)
    assert methods(c) == ["notifications/subscriptions/acknowledged"]


def test_closed_listeners_get_nothing_more():
    server = make_server()

    async def scenario() -> int:
        conn, notes, task = await listen(server, {"toolsListChanged": True})
        await conn.close()
        await asyncio.gather(task, return_exceptions=True)
        server.notify_tools_changed()
        return len(notes)

    assert run(scenario()) == 1
    assert len(server.core.subscriptions) == 0


@pytest.mark.parametrize("flt", [None, [], "all", {"resourceSubscriptions": "mem://x"},
                                 {"resourceSubscriptions": [1]}])
def test_listen_with_a_bad_filter_is_invalid_params(flt):
    params = {} if flt is None else {"notifications": flt}
    error = Client(make_server()).error("subscriptions/listen", params)
    assert error["code"] == INVALID_PARAMS
