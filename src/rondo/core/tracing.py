"""OpenTelemetry spans for the requests a server answers (optional: `opentelemetry-api`).

Imported only when a server is built with `tracing=...`; without it nothing here (and nothing
of OpenTelemetry) is loaded. One SERVER span per request, named and attributed after the
OpenTelemetry semantic conventions for MCP; its parent comes from W3C trace context in the
request's `_meta` (`traceparent`, `tracestate`, `baggage`), else from the HTTP headers.

The rounds of one MRTR flow are separate requests, so separate spans, usually in separate
traces. What ties them is a flow record the framework seals into the request state (`f` in the
envelope, see `mrtr/ask.py`): the flow id, the round number, and the first round's span
context. Every later round's span carries the same `rondo.mcp.flow.id` and links to the first.
A task (tasks extension) keeps the same kind of record of the span that created it, so every
later `tasks/*` span for it links back to its creation.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..server.server import require_otel
from ..wire.errors import McpError

if TYPE_CHECKING:
    from ..server.context import Context
    from ..server.request import Request

TRACE_KEYS = ("traceparent", "tracestate", "baggage")
_HEADER_KEYS = {k.encode(): k for k in TRACE_KEYS}
FLOW_ID = "rondo.mcp.flow.id"
FLOW_ROUND = "rondo.mcp.flow.round"
TASK_ID = "rondo.mcp.task.id"
ERA = "rondo.mcp.era"


class Tracer:
    """The span around `Core.dispatch` and the flow bookkeeping in `Core.invoke`."""

    __slots__ = ("_tracer", "_trace", "_kind", "_error", "_propagators", "_attach", "_detach",
                 "_noop", "_global", "on", "_next_check", "_clock")

    def __init__(self, setting: Any) -> None:
        from opentelemetry import context, trace
        from opentelemetry.baggage.propagation import W3CBaggagePropagator
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        from .. import __version__

        provider = None if setting is True else setting
        self._tracer = trace.get_tracer("rondo", __version__, tracer_provider=provider)
        # Until some TracerProvider is installed, every span would be the API's no-op one:
        # then skip the span machinery entirely (the "tracing on, no exporter" cost).
        self._noop = (trace.ProxyTracerProvider, trace.NoOpTracerProvider)
        self._global = trace.get_tracer_provider if provider is None else None
        self.on = provider is not None and not isinstance(provider, self._noop)
        self._next_check = 0.0
        self._clock = time.monotonic
        self._trace = trace
        self._kind = trace.SpanKind.SERVER
        self._error = trace.StatusCode.ERROR
        self._propagators = (TraceContextTextMapPropagator(), W3CBaggagePropagator())
        self._attach = context.attach
        self._detach = context.detach

    def parent(self, req: Request) -> Any:
        """The caller's context: `_meta` trace keys first, then HTTP headers; None if neither."""
        carrier: dict[str, str] = {}
        headers = req.headers
        if headers:
            for name, value in headers:
                key = _HEADER_KEYS.get(name.lower())
                if key is not None:
                    carrier[key] = value.decode("latin-1")
        meta = req.params.get("_meta")
        if isinstance(meta, dict):
            for key in TRACE_KEYS:
                value = meta.get(key)
                if isinstance(value, str):
                    carrier[key] = value
        if not carrier:
            return None
        context = None
        for propagator in self._propagators:
            context = propagator.extract(carrier, context=context)
        return context

    def active(self) -> bool:
        """False while every span would be a no-op (no global TracerProvider installed yet).

        Looking the global provider up costs microseconds, so it is done at most once a second
        until one is installed (usually at start-up); from then on spans are always made.
        """
        if self.on:
            return True
        current = self._global
        if current is None:
            return False  # a no-op provider was given explicitly
        now = self._clock()
        if now < self._next_check:
            return False
        self._next_check = now + 1.0
        self.on = not isinstance(current(), self._noop)
        return self.on

    async def around(
        self, req: Request, inner: Callable[[Request], Awaitable[dict[str, Any]]]
    ) -> dict[str, Any]:
        method = req.method
        params = req.params
        attrs: dict[str, Any] = {
            "mcp.method.name": method,
            "jsonrpc.request.id": str(req.id),
            "mcp.protocol.version": req.env.version,
            ERA: str(req.dialect.era),
            "network.transport": "tcp" if req.headers is not None else "pipe",
        }
        if req.headers is not None:
            attrs["network.protocol.name"] = "http"
        call = req.call
        if call is not None:
            attrs["mcp.session.id"] = call.session.id
        target = None
        name = params.get("name")
        if method == "tools/call" and isinstance(name, str):
            target = attrs["gen_ai.tool.name"] = name
            attrs["gen_ai.operation.name"] = "execute_tool"
        elif method == "prompts/get" and isinstance(name, str):
            target = attrs["gen_ai.prompt.name"] = name
        elif method == "resources/read" and isinstance(params.get("uri"), str):
            attrs["mcp.resource.uri"] = params["uri"]  # an attribute, not the span name: cardinality
        span_name = f"{method} {target}" if target else method
        parent = self.parent(req)
        # Made current, not only the span's parent: the caller's baggage reaches the handler.
        token = self._attach(parent) if parent is not None else None
        try:
            return await self._span(req, inner, span_name, attrs)
        finally:
            if token is not None:
                self._detach(token)

    async def _span(self, req: Request, inner: Callable[[Request], Awaitable[dict[str, Any]]],
                    span_name: str, attrs: dict[str, Any]) -> dict[str, Any]:
        with self._tracer.start_as_current_span(
            span_name, kind=self._kind, attributes=attrs,
            record_exception=False, set_status_on_exception=False,
        ) as span:
            try:
                result = await inner(req)
            except McpError as exc:
                code = str(exc.code)
                span.set_attribute("error.type", code)
                span.set_attribute("rpc.response.status_code", code)
                span.set_status(self._error, exc.message)
                raise
            except Exception as exc:
                span.set_attribute("error.type", type(exc).__qualname__)
                span.set_status(self._error)
                raise
            if result.get("isError") is True:
                span.set_attribute("error.type", "tool_error")
                span.set_status(self._error)
            return result

    def round(self, ctx: Context) -> None:
        """After the request state is open: name this round's flow and link to its first round."""
        span = self._trace.get_current_span()
        if not span.is_recording():
            return
        flow = ctx._flow
        first = _span_context(self._trace, flow)
        if first is None:
            here = span.get_span_context()
            flow = {"id": secrets.token_hex(8), "n": 1, "t": format(here.trace_id, "032x"),
                    "s": format(here.span_id, "016x")}
        else:
            flow = {**flow, "n": int(flow.get("n", 1)) + 1}
            span.add_link(first, {FLOW_ID: flow["id"]})
        ctx.continue_flow(flow)
        span.set_attribute(FLOW_ID, flow["id"])
        span.set_attribute(FLOW_ROUND, flow["n"])

    # -- tasks: a task's later requests link to the span that created it ----------------------

    def recording(self) -> Any:
        """The current span if it records, else None (kept by a tools/call that may make a task)."""
        span = self._trace.get_current_span()
        return span if span.is_recording() else None

    def task_origin(self, span: Any, task_id: str, flow: Any) -> dict[str, str]:
        """Name the task on the span creating it; what the task record keeps of that span."""
        span.set_attribute(TASK_ID, task_id)
        here = span.get_span_context()
        origin = {"t": format(here.trace_id, "032x"), "s": format(here.span_id, "016x")}
        if isinstance(flow, dict) and isinstance(flow.get("id"), str):
            origin["f"] = flow["id"]
        return origin

    def task_poll(self, task_id: str, origin: Any) -> None:
        """A tasks/get, tasks/update or tasks/cancel span: name the task, link to its creation."""
        span = self._trace.get_current_span()
        if span.is_recording():
            span.set_attribute(TASK_ID, task_id)
            self._link_task(span, task_id, origin)

    def task_watch(self, tasks: list[tuple[str, Any]]) -> None:
        """A subscriptions/listen span watching tasks: every task named, each linked."""
        span = self._trace.get_current_span()
        if tasks and span.is_recording():
            span.set_attribute(TASK_ID, [task_id for task_id, _ in tasks])
            for task_id, origin in tasks:
                self._link_task(span, task_id, origin)

    def _link_task(self, span: Any, task_id: str, origin: Any) -> None:
        # A record from before tracing, or one whose field is damaged, simply has no link.
        if not isinstance(origin, dict):
            return
        created = _remote_context(self._trace, origin.get("t"), origin.get("s"))
        if created is None:
            return
        attrs = {TASK_ID: task_id}
        flow = origin.get("f")
        if isinstance(flow, str):
            attrs[FLOW_ID] = flow
        span.add_link(created, attrs)


def _span_context(trace: Any, flow: Any) -> Any:
    """The first round's span context from a sealed flow record, or None if it is not one."""
    if not isinstance(flow, dict) or not isinstance(flow.get("id"), str):
        return None
    rounds = flow.get("n", 1)
    if not isinstance(rounds, int) or isinstance(rounds, bool):
        return None
    return _remote_context(trace, flow.get("t"), flow.get("s"))


def _remote_context(trace: Any, trace_hex: Any, span_hex: Any) -> Any:
    """A remote span context from its hex ids, or None unless both are valid ids."""
    if not isinstance(trace_hex, str) or not isinstance(span_hex, str):
        return None
    if len(trace_hex) > 34 or len(span_hex) > 18:  # bounded work, whatever a record holds
        return None
    try:
        trace_id = int(trace_hex, 16)
        span_id = int(span_hex, 16)
    except ValueError:
        return None
    if not (0 < trace_id < 1 << 128 and 0 < span_id < 1 << 64):
        return None
    return trace.SpanContext(trace_id, span_id, is_remote=True,
                             trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED))


def inject(meta: dict[str, Any]) -> None:
    """Put the current trace context and baggage into a request's `_meta` (the client side)."""
    from opentelemetry.baggage.propagation import W3CBaggagePropagator
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    TraceContextTextMapPropagator().inject(meta)
    W3CBaggagePropagator().inject(meta)


__all__ = ["FLOW_ID", "FLOW_ROUND", "TASK_ID", "TRACE_KEYS", "Tracer", "inject", "require_otel"]
