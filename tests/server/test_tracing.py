"""OpenTelemetry: a span per request with the MCP semantic-convention attributes, parent from
`_meta` or HTTP headers, client injection, and the rounds of one MRTR flow linked through the
flow record sealed in the request state. The SDK's in-memory exporter is the referee."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry import baggage, trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import rondo  # noqa: E402
from rondo import InputRequired, elicit  # noqa: E402
from rondo.state import StatePolicy  # noqa: E402
from tests.helpers.helpers_core import Client, accept, asgi_client, http_headers, text_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[1].parent
COLOR = elicit.form("Color?", {"type": "object", "properties": {"c": {"type": "string"}}, "required": ["c"]})
PARENT_TRACE = "0af7651916cd43dd8448eb211c80319c"
PARENT_SPAN = "b7ad6b7169203331"
TRACEPARENT = f"00-{PARENT_TRACE}-{PARENT_SPAN}-01"


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


def traced_server(exporter: InMemorySpanExporter) -> rondo.Server:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    server = rondo.Server("traced", state=StatePolicy(secret=b"t" * 32), tracing=provider)

    @server.tool
    def three_rounds(ctx: rondo.Context) -> Any:
        """Round 1 asks the color, round 2 is state-only, round 3 answers."""
        color = ctx.ask("color", COLOR)
        if ctx.state != "confirmed":
            return InputRequired(state="confirmed")
        return f"{color.content['c']}"

    @server.tool
    def fails(ctx: rondo.Context) -> str:
        raise rondo.ToolError("nope")

    return server


def answer(key: str, request: dict[str, Any]) -> dict[str, Any]:
    return accept({"c": "red"})


def hex_trace(span: Any) -> str:
    return format(span.context.trace_id, "032x")


def test_three_rounds_three_spans_one_flow_linked_to_the_first(exporter: InMemorySpanExporter) -> None:
    client = Client(traced_server(exporter))
    response, interim = client.flow("tools/call", {"name": "three_rounds"}, answer)
    assert text_of(response["result"]) == "red" and len(interim) == 2
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == ["tools/call three_rounds"] * 3
    flows = {s.attributes["rondo.mcp.flow.id"] for s in spans}
    assert len(flows) == 1
    assert [s.attributes["rondo.mcp.flow.round"] for s in spans] == [1, 2, 3]
    first = spans[0]
    assert list(first.links) == []
    for later in spans[1:]:
        (link,) = later.links
        assert link.context.trace_id == first.context.trace_id
        assert link.context.span_id == first.context.span_id
        assert link.attributes["rondo.mcp.flow.id"] in flows
    # Separate requests, separate traces: only the link ties them.
    assert len({s.context.trace_id for s in spans}) == 3


def test_semantic_convention_attributes(exporter: InMemorySpanExporter) -> None:
    client = Client(traced_server(exporter))
    client.result("tools/call", {"name": "three_rounds"})
    client.result("tools/call", {"name": "fails"})
    client.error("tools/call", {"name": "three_rounds", "requestState": "forged"})
    first, tool_error, refused = exporter.get_finished_spans()
    assert first.kind == trace.SpanKind.SERVER
    attrs = dict(first.attributes)
    assert attrs["mcp.method.name"] == "tools/call"
    assert attrs["gen_ai.tool.name"] == "three_rounds"
    assert attrs["gen_ai.operation.name"] == "execute_tool"
    assert attrs["jsonrpc.request.id"] == "1"
    assert attrs["mcp.protocol.version"] == "2026-07-28"
    assert attrs["rondo.mcp.era"] == "modern"
    assert attrs["network.transport"] == "pipe"
    assert "error.type" not in attrs
    assert tool_error.attributes["error.type"] == "tool_error"
    assert tool_error.status.status_code == trace.StatusCode.ERROR
    assert refused.attributes["error.type"] == "-32602"
    assert refused.attributes["rpc.response.status_code"] == "-32602"


def test_parent_from_meta_traceparent_and_baggage(exporter: InMemorySpanExporter) -> None:
    seen: list[Any] = []
    server = traced_server(exporter)

    @server.tool
    def peek() -> str:
        seen.append(baggage.get_baggage("tenant"))
        return "ok"

    client = Client(server)
    client.result("tools/call", {"name": "peek"}, traceparent=TRACEPARENT, baggage="tenant=acme")
    (span,) = exporter.get_finished_spans()
    assert hex_trace(span) == PARENT_TRACE
    assert span.parent is not None and format(span.parent.span_id, "016x") == PARENT_SPAN
    assert seen == ["acme"]


def test_parent_from_http_headers(exporter: InMemorySpanExporter) -> None:
    server = traced_server(exporter)
    app = server.asgi()
    message = Client(server).message("tools/list")

    async def go() -> None:
        headers = {**http_headers(message), "traceparent": TRACEPARENT}
        async with asgi_client(app) as http:
            response = await http.post("/mcp", json=message, headers=headers)
            assert response.status_code == 200

    asyncio.run(go())
    (span,) = exporter.get_finished_spans()
    assert hex_trace(span) == PARENT_TRACE
    assert span.attributes["network.transport"] == "tcp"
    assert span.attributes["network.protocol.name"] == "http"


def test_client_injects_the_current_context(exporter: InMemorySpanExporter) -> None:
    server = traced_server(exporter)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    outer = provider.get_tracer("test")

    async def go() -> None:
        async with rondo.Client(server, tracing=True) as client:
            with outer.start_as_current_span("agent step") as step:
                await client.list_tools()
                return step.get_span_context()

    step = asyncio.run(go())
    server_span = next(s for s in exporter.get_finished_spans() if s.name == "tools/list")
    assert server_span.context.trace_id == step.trace_id
    assert server_span.parent.span_id == step.span_id


def test_a_legacy_session_span_names_the_session(exporter: InMemorySpanExporter) -> None:
    from tests.legacy.test_legacy import LegacyClient

    async def go() -> None:
        client = LegacyClient(traced_server(exporter))
        await client.initialize()
        await client.result("tools/list")

    asyncio.run(go())
    (span,) = exporter.get_finished_spans()
    assert span.attributes["rondo.mcp.era"] == "legacy"
    assert span.attributes["mcp.protocol.version"] == "2025-11-25"
    assert isinstance(span.attributes["mcp.session.id"], str)


def test_tracing_without_opentelemetry_fails_at_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    monkeypatch.setitem(sys.modules, "opentelemetry.trace", None)
    with pytest.raises(ImportError, match=r"rondo-mcp\[otel\]"):
        rondo.Server("x", tracing=True)


@pytest.mark.slow
def test_no_tracing_imports_nothing_of_opentelemetry() -> None:
    code = (
        "import sys, asyncio, rondo\n"
        "s = rondo.Server('x')\n"
        "s.tool(lambda: 'ok', name='t')\n"
        "m = {'jsonrpc': '2.0', 'id': 1, 'method': 'tools/call', 'params': {'name': 't', '_meta': {"
        "'io.modelcontextprotocol/protocolVersion': '2026-07-28',"
        "'io.modelcontextprotocol/clientCapabilities': {}}}}\n"
        "assert asyncio.run(s.core.handle(m))['result']['content'][0]['text'] == 'ok'\n"
        "print(sorted(n for n in sys.modules if n.startswith('opentelemetry')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_global_provider_installed_later_is_picked_up_within_a_second(
    exporter: InMemorySpanExporter,
) -> None:
    from rondo.core.tracing import Tracer

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = Tracer(True)
    now = [100.0]
    installed: list[Any] = [trace.ProxyTracerProvider()]
    tracer._clock = lambda: now[0]
    tracer._global = lambda: installed[0]
    assert tracer.active() is False  # no provider yet: no span machinery at all
    installed[0] = provider
    now[0] += 0.5
    assert tracer.active() is False  # looked up at most once a second
    now[0] += 0.6
    assert tracer.active() is True and tracer.on


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)
flow_like = st.fixed_dictionaries(
    {"id": st.text(max_size=20)},
    optional={"t": st.text("0123456789abcdefx", max_size=34) | json_values,
              "s": st.text("0123456789abcdefx", max_size=18) | json_values,
              "n": json_values},
)


@given(json_values | flow_like
       | st.builds(lambda t, s: {"id": "f", "t": t, "s": s}, st.sampled_from(["f" * 33, "0" * 32, "-1", " 1f"]),
                   st.sampled_from(["f" * 17, "0", "1"])))
def test_any_flow_record_is_a_link_or_nothing_never_a_crash(flow: Any) -> None:
    from rondo.core.tracing import _span_context

    found = _span_context(trace, flow)
    assert found is None or (found.is_valid and found.is_remote)
