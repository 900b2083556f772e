"""Middleware: runs anew on every MRTR round, cannot widen capabilities or rewrite the
framework's fields, can short-circuit, runs in order, per component too; the ready-made ones
(request log, rate limiter by principal)."""

from __future__ import annotations

import asyncio
import logging
import operator
import sys
from pathlib import Path
from typing import Any

import pytest

import rondo  # noqa: E402
from rondo import InputRequired, elicit  # noqa: E402
from rondo.middleware import RATE_LIMITED, RateLimit, RequestLog, RequestView  # noqa: E402
from rondo.state import StatePolicy  # noqa: E402
from tests.helpers.helpers_core import (  # noqa: E402
    INTERNAL_ERROR,
    MISSING_CAPABILITY,
    Client,
    accept,
    text_of,
)

COLOR = elicit.form(
    "Which color?",
    {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
)
FORM_ONLY = {"elicitation": {"form": {}}}


def make_server(chain: list[Any], **tool_kw: Any) -> rondo.Server:
    server = rondo.Server("mw", state=StatePolicy(secret=b"k" * 32), middleware=chain)

    @server.tool(**tool_kw)
    def color(ctx: rondo.Context) -> str:
        answer = ctx.ask("color", COLOR)
        seen = ctx.extras.get("tenant", "-")
        return f"{answer.content['color']} for {seen}"

    @server.tool
    def consent(ctx: rondo.Context) -> str:
        answer = ctx.ask("consent", elicit.url("Connect", "https://example.com/c"))
        return answer.action

    @server.tool
    def plain(x: int) -> dict[str, int]:
        return {"x": x}

    return server


def answer_color(key: str, request: dict[str, Any]) -> dict[str, Any]:
    return accept({"color": "teal"})


def test_server_middleware_runs_anew_on_every_round() -> None:
    seen: list[tuple[str, bool, Any]] = []

    async def record(request: RequestView, call_next: Any) -> Any:
        result = await call_next(request)
        seen.append((request.method, request.is_retry, result.get("resultType")))
        return result

    client = Client(make_server([record]))
    response, interim = client.flow("tools/call", {"name": "color"}, answer_color)
    assert text_of(response["result"]) == "teal for -" and len(interim) == 1
    assert seen == [("tools/call", False, "input_required"), ("tools/call", True, None)]


def test_middleware_cannot_widen_the_declared_capabilities() -> None:
    tried: list[str] = []

    async def widen(request: RequestView, call_next: Any) -> Any:
        caps = request.client_capabilities
        for attempt in (
            lambda: operator.setitem(caps, "elicitation", {"url": {}}),
            lambda: operator.setitem(caps["elicitation"], "url", {}),
            lambda: setattr(request, "client_capabilities", {"elicitation": {"url": {}}}),
            lambda: setattr(request, "params", {}),
        ):
            try:
                attempt()
            except (TypeError, AttributeError) as exc:
                tried.append(type(exc).__name__)
        return await call_next(request)

    client = Client(make_server([widen]), caps=FORM_ONLY)
    error = client.error("tools/call", {"name": "consent"})
    # Admission read what the request declared: URL elicitation is still missing.
    assert error["code"] == MISSING_CAPABILITY
    assert error["data"]["requiredCapabilities"] == {"elicitation": {"url": {}}}
    assert tried == ["TypeError", "TypeError", "AttributeError", "AttributeError"]


def test_middleware_cannot_pass_on_a_request_of_its_own() -> None:
    async def swap(request: RequestView, call_next: Any) -> Any:
        class Fake:
            client_capabilities = {"elicitation": {"url": {}}}

        return await call_next(Fake())

    client = Client(make_server([swap]), caps=FORM_ONLY)
    error = client.error("tools/call", {"name": "consent"})
    assert error["code"] == INTERNAL_ERROR and "call_next" in error["message"]


def test_middleware_cannot_rewrite_input_responses_or_state() -> None:
    async def rewrite(request: RequestView, call_next: Any) -> Any:
        if "inputResponses" in request.params:
            with pytest.raises(TypeError, match="does not support item assignment"):
                request.params["inputResponses"]["color"] = accept({"color": "forged"})  # type: ignore[index]
            with pytest.raises(TypeError, match="does not support item assignment"):
                request.params["requestState"] = "forged"  # type: ignore[index]
        return await call_next(request)

    client = Client(make_server([rewrite]))
    response, _ = client.flow("tools/call", {"name": "color"}, answer_color)
    assert text_of(response["result"]) == "teal for -"


def test_short_circuit_with_a_result_and_with_an_error() -> None:
    async def deny(request: RequestView, call_next: Any) -> Any:
        if request.name == "plain":
            raise rondo.McpError(-32001, "denied by policy")
        if request.name == "color":
            return {"content": [{"type": "text", "text": "closed today"}], "isError": True}
        return await call_next(request)

    client = Client(make_server([deny]))
    assert client.error("tools/call", {"name": "plain", "arguments": {"x": 1}}) == {
        "code": -32001, "message": "denied by policy"}
    result = client.tool("color")
    assert result["isError"] is True and text_of(result) == "closed today"
    assert client.result("tools/list")["tools"]  # others pass through


def test_middleware_returning_a_non_result_is_an_internal_error() -> None:
    async def broken(request: RequestView, call_next: Any) -> Any:
        await call_next(request)
        return "oops"

    client = Client(make_server([broken]))
    error = client.error("tools/list")
    assert error["code"] == INTERNAL_ERROR and "str" in error["message"]


def test_order_server_outermost_then_component_then_handler() -> None:
    order: list[str] = []

    def named(name: str) -> Any:
        async def mw(request: RequestView, call_next: Any) -> Any:
            order.append(f"{name}>")
            result = await call_next(request)
            order.append(f"<{name}")
            return result

        return mw

    server = make_server([named("a"), named("b")], middleware=[named("c")])
    client = Client(server)
    client.tool("plain", {"x": 1})
    assert order == ["a>", "b>", "<b", "<a"]  # plain has no component middleware
    order.clear()
    client.flow("tools/call", {"name": "color"}, answer_color)
    assert order == ["a>", "b>", "c>", "<c", "<b", "<a"] * 2


def test_component_middleware_passes_extras_and_may_answer_for_the_handler() -> None:
    async def tenant(request: RequestView, call_next: Any) -> Any:
        request.extras["tenant"] = "acme"
        return await call_next(request)

    async def cached(request: RequestView, call_next: Any) -> Any:
        assert request.component == "color" and request.extras["tenant"] == "acme"
        if request.params.get("arguments", {}).get("cached"):
            return "from cache"  # the handler's kind of value: shaped after middleware
        return await call_next(request)

    server = make_server([tenant], middleware=[cached])
    client = Client(server)
    response, _ = client.flow("tools/call", {"name": "color"}, answer_color)
    assert text_of(response["result"]) == "teal for acme"


def test_component_middleware_may_end_the_round_with_input_required() -> None:
    async def gate(request: RequestView, call_next: Any) -> Any:
        if not request.is_retry:
            return InputRequired(state="checked")
        return await call_next(request)

    server = rondo.Server("gate", state=StatePolicy(secret=b"k" * 32))

    @server.tool(middleware=[gate], output_schema={"type": "object", "properties": {"ok": {"type": "boolean"}},
                                                    "required": ["ok"]})
    def strict(ctx: rondo.Context) -> dict[str, bool]:
        return {"ok": ctx.state == "checked"}

    client = Client(server)
    response, interim = client.flow("tools/call", {"name": "strict"}, answer_color)
    # The interim result skipped output validation; the final one was validated and shaped.
    assert interim[0].keys() >= {"resultType", "requestState"}
    assert response["result"]["structuredContent"] == {"ok": True}


def test_bad_middleware_fails_at_start_up() -> None:
    def not_async(request: Any, call_next: Any) -> Any:
        return None

    with pytest.raises(TypeError, match="async callable"):
        rondo.Server("x", middleware=[not_async])
    with pytest.raises(TypeError, match="list"):
        rondo.Server("x", middleware=not_async)  # type: ignore[arg-type]
    server = rondo.Server("x")
    with pytest.raises(TypeError, match="async callable"):
        server.tool(middleware=[42])  # type: ignore[list-item]


# -- ready-made ----------------------------------------------------------------------------------


def principal_server(limit: RateLimit) -> rondo.Server:
    policy = StatePolicy(secret=b"k" * 32, principal=lambda ctx: ctx.auth)
    server = rondo.Server("limited", state=policy, middleware=[limit])

    @server.tool
    def ping() -> str:
        return "pong"

    return server


def test_rate_limiter_keeps_one_bucket_per_principal() -> None:
    now = [0.0]
    limit = RateLimit(rate=1, burst=2, clock=lambda: now[0])
    server = principal_server(limit)
    ann, bob = Client(server, auth="ann"), Client(server, auth="bob")
    assert text_of(ann.tool("ping")) == "pong"
    assert text_of(ann.tool("ping")) == "pong"
    error = ann.error("tools/call", {"name": "ping"})
    assert error["code"] == RATE_LIMITED and error["data"]["retryAfterMs"] == 1001
    assert text_of(bob.tool("ping")) == "pong"  # bob has his own bucket
    now[0] = 1.0  # one token back for ann
    assert text_of(ann.tool("ping")) == "pong"
    assert ann.error("tools/call", {"name": "ping"})["code"] == RATE_LIMITED


def test_rate_limiter_memory_is_bounded() -> None:
    limit = RateLimit(rate=1, burst=1, max_keys=3, clock=lambda: 0.0)
    for key in range(100):
        assert limit.take(key) == 0.0
    assert len(limit._buckets) == 3 and list(limit._buckets) == [97, 98, 99]
    assert limit.take(0) == 0.0  # evicted, so a fresh bucket
    with pytest.raises(ValueError, match="rate must be a positive number of requests per second"):
        RateLimit(rate=0)
    with pytest.raises(ValueError, match="burst must be a positive integer"):
        RateLimit(rate=1, burst=0)


def test_request_log_times_each_round_without_arguments(caplog: pytest.LogCaptureFixture) -> None:
    ticks = iter([0.0, 0.0125, 1.0, 1.002])
    log = RequestLog(clock=lambda: next(ticks))
    client = Client(make_server([log]))
    with caplog.at_level(logging.INFO, logger="rondo.requests"):
        client.flow("tools/call", {"name": "color", "arguments": {}}, answer_color)
    lines = [r.getMessage() for r in caplog.records if r.name == "rondo.requests"]
    assert lines == [
        "tools/call color id=1 era=modern principal=- -> input_required in 12.5 ms",
        "tools/call color id=2 era=modern principal=- -> ok in 2.0 ms",
    ]
    assert all("teal" not in line for line in lines)


def test_middleware_sees_legacy_back_channel_rounds() -> None:
    from tests.legacy.test_legacy_rounds import LegacyClient

    seen: list[tuple[str, bool]] = []

    async def record(request: RequestView, call_next: Any) -> Any:
        seen.append((request.method, request.is_retry))
        assert request.era == "legacy"
        return await call_next(request)

    server = rondo.Server("legacy-mw", state=StatePolicy(secret=b"k" * 32), middleware=[record])

    @server.tool
    def explicit(ctx: rondo.Context) -> Any:
        if "color" not in ctx.input_responses:
            return InputRequired({"color": COLOR})
        return ctx.input_responses["color"]["content"]["color"]

    async def go() -> None:
        client = LegacyClient(server)
        client.answers["elicitation/create"] = lambda params: accept({"color": "red"})
        await client.initialize()
        result = await client.result("tools/call", {"name": "explicit", "arguments": {}})
        assert result["content"][0]["text"] == "red"

    asyncio.run(asyncio.wait_for(go(), 20))
    # The handshake is a request like any other (issue 37 defect 10), then both rounds.
    assert seen == [("initialize", False), ("tools/call", False), ("tools/call", True)]


@pytest.mark.slow
def test_middleware_that_waits_runs_once_per_request_over_stdio(tmp_path: Path) -> None:
    # stdio answers inline what cannot wait; a middleware that awaits must not be started
    # there and restarted on the event loop (two tokens, two log lines).
    import json
    import subprocess

    script = tmp_path / "srv.py"
    script.write_text(
        "import asyncio, sys, rondo\n"
        "calls = []\n"
        "async def slow(request, call_next):\n"
        "    calls.append(request.method)\n"
        "    await asyncio.sleep(0)\n"
        "    result = await call_next(request)\n"
        "    print(f'calls={len(calls)}', file=sys.stderr, flush=True)\n"
        "    return result\n"
        "server = rondo.Server('s', middleware=[slow])\n"
        "@server.tool\n"
        "def add(a: int, b: int) -> int:\n"
        "    \"\"\"Add two integers.\"\"\"\n"
        "    return a + b\n"
        "server.run_stdio()\n"
    )
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": meta}})
    out = subprocess.run([sys.executable, str(script)], input=line + "\n", capture_output=True,
                         text=True, timeout=60)
    response = json.loads(out.stdout.splitlines()[0])
    assert response["result"]["content"][0]["text"] == "3"
    assert [ln for ln in out.stderr.splitlines() if ln.startswith("calls=")] == ["calls=1"]


def test_an_input_required_made_by_middleware_is_admitted_too() -> None:
    async def ask_url(request: RequestView, call_next: Any) -> Any:
        if request.name == "plain":
            return {"resultType": "input_required",
                    "inputRequests": {"go": elicit.url("Sign in", "https://example.com/in")}}
        return await call_next(request)

    client = Client(make_server([ask_url]), caps=FORM_ONLY)
    error = client.error("tools/call", {"name": "plain", "arguments": {"x": 1}})
    assert error["code"] == MISSING_CAPABILITY
    assert error["data"]["requiredCapabilities"] == {"elicitation": {"url": {}}}
    ok = Client(make_server([ask_url])).result("tools/call", {"name": "plain", "arguments": {"x": 1}})
    assert ok["resultType"] == "input_required"


def test_mask_errors_hides_the_exception_and_logs_it_with_a_reference(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from rondo.middleware import MaskErrors

    server = rondo.Server("masked")

    @server.tool(middleware=[MaskErrors()])
    def leaky() -> str:
        raise RuntimeError("db password=hunter2 at 10.0.0.7")

    @server.tool(middleware=[MaskErrors()])
    def polite() -> str:
        raise rondo.ToolError("No such order: 42")

    client = Client(server)
    with caplog.at_level(logging.ERROR, logger="rondo.errors"):
        result = client.tool("leaky")
    text = text_of(result)
    assert result["isError"] is True and "hunter2" not in text
    assert text.startswith("The tool failed. Please try again later. (reference ")
    ref = text.rsplit(" ", 1)[1].rstrip(")")
    assert any(ref in r.getMessage() and r.exc_info for r in caplog.records)
    assert text_of(client.tool("polite")) == "No such order: 42"  # meant for the model
