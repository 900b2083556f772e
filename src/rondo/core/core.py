"""The transport-free core: one request in, one result (plus notifications) out.

`Core.handle` answers a whole 2026-07-28 message (stdio, memory, tests). Transports that
interleave their own checks (Streamable HTTP with its headers) build a `Request` and call
`dispatch`. Which methods exist is the method table's business (`methods.py`); what an era
allows is the request's dialect's (`modern.py`, `legacy.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any

from ..mrtr.ask import load_envelope
from ..mrtr.result import AskInterrupt, InputRequired
from ..server.method import Method, Wrap
from ..server.request import Emit, Request, _noop
from ..wire.envelope import check_version, envelope
from ..wire.errors import (
    McpError,
    internal_error,
    invalid_params,
    method_not_found,
    resource_not_found,
)
from ..wire.jsonrpc import error_response, readable_id, request_shape, result_response
from ..wire.logs import logger
from .express import express_ready
from .failures import masked_internal_error
from .methods import BUILTIN
from .middleware import RequestView, run_chain
from .modern import ModernDialect
from .subscriptions import Subscriptions

if TYPE_CHECKING:
    from ..server.context import Context
    from ..server.server import Server
    from .tracing import Tracer
    from .typed import TypedCalls

log = logger("rondo.server")


class Core:
    """Answers requests for one `Server`. Holds no per-client state."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.subscriptions = Subscriptions(server.max_listen_streams,
                                           server.max_listen_per_principal)
        # The rows as declared (built-in, then the server's and extensions' own), the wraps
        # around them, and what dispatch reads: each row with its wraps applied.
        self.rows: dict[str, Method] = {m.name: m for m in BUILTIN}
        for method in server.extra_methods:
            self.rows[method.name] = method
        self._wraps: dict[str, list[Wrap]] = {}
        for wrap in server.wraps:
            self._wraps.setdefault(wrap.method, []).append(wrap)
        self.methods: dict[str, Method] = {}
        for name in self.rows:
            self._compose(name)
        for name in self._wraps:
            if name not in self.rows:
                raise ValueError(f"an extension wraps {name!r}, which no row of the table answers")
        # What takes a tools/call away from the fast lanes: the wraps' tool predicates.
        self.claims: tuple[Callable[[Any], bool], ...] = ()
        self.modern = ModernDialect(self)
        self.middleware = server.middleware
        # The OpenTelemetry hooks, or None: then tracing costs one attribute test per request.
        self.tracer: Tracer | None = None
        if server.tracing is not None:
            from .tracing import Tracer

            self.tracer = Tracer(server.tracing)
        # May a plain tools/call take the express lane (core/express.py)?
        self.express = False
        self._lanes()
        # Its typed decoder (core/typed.py), built at the first call; None: build it then.
        self.typed: TypedCalls | None = None
        server.on_change(self._follow)

    def _follow(self, what: str, detail: Any) -> None:
        """The registry changed (`Server.on_change`): keep the table, the lanes and the
        listening clients in step."""
        if what == "method":
            self.rows[detail.name] = detail
            self._compose(detail.name)
        elif what == "wrap":
            if detail.method not in self.rows:
                raise ValueError(f"an extension wraps {detail.method!r}, which no row answers")
            self._wraps.setdefault(detail.method, []).append(detail)
            self._compose(detail.method)
        elif what == "unmethod":
            builtin = next((m for m in BUILTIN if m.name == detail.name), None)
            if builtin is not None:
                self.rows[detail.name] = builtin
                self._compose(detail.name)
            else:
                self.rows.pop(detail.name, None)
                self.methods.pop(detail.name, None)
        elif what == "unwrap":
            mine = self._wraps.get(detail.method, [])
            if detail in mine:
                mine.remove(detail)
            if detail.method in self.rows:
                self._compose(detail.method)
        elif what == "resource":
            self.subscriptions.resource_updated(detail)
        elif what in ("extension", "unextension"):
            pass  # its rows and wraps came (or went) one by one
        else:
            if what == "tools":
                self.typed = None  # the typed lane's union names the tools as they were
            self.subscriptions.list_changed(what)

    def _compose(self, name: str) -> None:
        row = self.rows[name]
        for wrap in self._wraps.get(name, ()):
            row = wrap.around(row)
        self.methods[name] = row
        if name == "tools/call" and hasattr(self, "claims"):
            self._lanes()

    def _lanes(self) -> None:
        """May a plain tools/call take the express lane (core/express.py), and which tools do
        wraps take from it? A replaced row, or a wrap that takes every call, turns it off."""
        wraps = self._wraps.get("tools/call", ())
        self.claims = tuple(w.tools for w in wraps if w.tools is not None)
        self.express = express_ready(self) and all(w.tools is not None for w in wraps)
        self.typed = None  # the typed lane's union leaves out the tools wraps take

    def takes(self, tool: Any) -> bool:
        """Does a wrap of tools/call take this tool (so it may not use a fast lane)?"""
        return any(claim(tool) for claim in self.claims)

    def typed_calls(self) -> TypedCalls:
        typed = self.typed
        if typed is None:
            from .typed import TypedCalls

            typed = self.typed = TypedCalls(self)
        return typed

    # -- entry points ----------------------------------------------------------------------------

    async def handle(
        self, msg: Any, *, emit: Emit = _noop, auth: Any = None
    ) -> dict[str, Any] | None:
        """Answer one decoded 2026-07-28 message; None for notifications. Never raises for bad
        input (the transport handles `notifications/cancelled` itself)."""
        try:
            rid, method, params, is_request = request_shape(msg)
        except McpError as exc:
            return error_response(readable_id(msg), exc)
        if not is_request:
            return None
        return await self.handle_shaped(rid, method, params, emit=emit, auth=auth)

    async def handle_shaped(
        self, rid: Any, method: str, params: dict[str, Any], *, emit: Emit = _noop,
        auth: Any = None,
    ) -> dict[str, Any]:
        """`handle` for a request whose JSON-RPC shape was already checked (by `request_shape`):
        the response, never an exception."""
        try:
            env = envelope(params)
            check_version(env)
            result = await self.dispatch(
                Request(rid, method, params, env, self.modern, emit=emit, auth=auth)
            )
            return result_response(rid, result)
        except McpError as exc:
            return error_response(rid, exc)
        except Exception:
            return error_response(rid, masked_internal_error(
                log, "unexpected failure answering a request"))

    def dispatch(self, req: Request) -> Coroutine[Any, Any, dict[str, Any]]:
        """Run the request's method and return its result object, shaped by the dialect.
        Raises McpError. (A plain def returning the coroutine: no extra frame per request.)"""
        tracer = self.tracer
        if tracer is not None and tracer.active():
            return tracer.around(req, self._dispatch)
        return self._dispatch(req)

    async def _dispatch(self, req: Request) -> dict[str, Any]:
        method = self.methods.get(req.method)
        if method is None or req.dialect.era not in method.eras:
            raise method_not_found(req.method)
        gate = method.gate
        if gate is not None and not self.server.serves(gate):
            raise method_not_found(req.method)
        try:
            if self.middleware:
                result = await self._round(method, req)
            else:
                result = await method.handler(self, req)
            if result.get("resultType") == "input_required":
                # Modern: goes to the client as it is. Legacy: answered in-process, each new
                # round through `_round` again (middleware included).
                result = await req.dialect.settle(
                    self, req, result, lambda nxt: self._round(method, nxt))
        except AskInterrupt:
            # `invoke` turns ctx.ask into input_required for the methods that may ask; one
            # reaching here came from anywhere else (a hook holding on to a Context, say).
            raise internal_error(
                f"{req.method} cannot ask for input (only tools/call, prompts/get and "
                "resources/read can)"
            ) from None
        shaped: dict[str, Any] = req.dialect.finish(req, result)
        return shaped

    async def _round(self, method: Method, req: Request) -> dict[str, Any]:
        """One round of a request: the server's middleware around the method handler."""
        chain = self.middleware
        if not chain:
            return await method.handler(self, req)
        result = await run_chain(chain, RequestView(req, self.server), lambda: method.handler(self, req))
        if not isinstance(result, dict):
            raise internal_error(f"middleware answered {req.method} with {type(result).__name__}, not a result object")
        if result.get("resultType") == "input_required":
            # One a middleware made itself passes the same admission as a handler's: checked
            # against what the request declared, whatever the middleware believes.
            from ..kinds import missing_capabilities
            from ..mrtr.admission import check_requests
            from ..wire.errors import missing_capability

            asked = result.get("inputRequests") or {}
            if not isinstance(asked, dict):
                raise internal_error("inputRequests must be an object")
            check_requests(asked)
            missing = missing_capabilities(asked, req.env.capabilities)
            if missing:
                raise missing_capability(missing)
        return result

    def may_suspend(self, method: str, params: Mapping[str, Any]) -> bool:
        """Could answering this request wait on something (an async handler, a stream)?

        When it cannot, a transport may await `dispatch` inline instead of running it as a
        concurrent task: whatever it emits is already known when the result is.
        """
        if self.middleware:
            # Middleware may await anything, and must run exactly once per request (a rate
            # limiter's token, a log line): never start it on a path that could restart it.
            return True
        row = self.methods.get(method)
        return row is not None and row.suspends is not None and row.suspends(self, params)

    # -- the one path tools, prompts and resources share ------------------------------------------

    async def invoke(
        self,
        req: Request,
        component: Any,
        arguments: Any,
        refuse: Callable[[str], Any],
    ) -> tuple[bool, Any]:
        """Build the context, open the retry envelope, bind the arguments and run the component.

        Returns `(True, result dict)` when the round is already answered (input_required, or
        `refuse(reason)` for arguments that do not bind) and `(False, value)` for the
        component's own return value, which the caller shapes.
        """
        dialect = req.dialect
        ctx = dialect.context(self, req)
        params = req.params
        if "inputResponses" in params or "requestState" in params:
            self.open_retry(ctx, params)
        tracer = self.tracer
        if tracer is not None and tracer.on:
            tracer.round(ctx)
        sig = component.signature
        try:
            kwargs = sig.bind(arguments)
        except Exception as exc:
            from ..server.schema import ArgumentError  # only refusals pay for the import

            if not isinstance(exc, ArgumentError):
                raise
            return True, refuse(str(exc))
        chain = component.middleware
        if chain:
            view = RequestView(req, self.server, getattr(component, "name", None) or component.uri)
            value = await run_chain(chain, view, lambda: dialect.run(ctx, component.fn, sig, kwargs))
        else:
            value = await dialect.run(ctx, component.fn, sig, kwargs)
        if isinstance(value, InputRequired):
            return True, dialect.input_required(ctx, value)
        return False, value

    def open_retry(self, ctx: Context, params: Mapping[str, Any]) -> None:
        """Check the retry envelope and open the request state before any handler runs."""
        if "inputResponses" in params:
            responses = params["inputResponses"]
            if not isinstance(responses, dict):
                raise invalid_params("inputResponses must be an object")
            for key, value in responses.items():
                if not isinstance(value, dict):
                    raise invalid_params(f"Invalid input response for '{key}': expected an object")
            ctx.input_responses = responses
        if "requestState" in params:
            token = params["requestState"]
            policy = self.server.state_policy
            if policy is None:
                if not isinstance(token, str):
                    raise invalid_params("requestState must be a string")
                ctx.state = token
            else:
                # The policy refuses every bad token (non-strings included) with one message.
                load_envelope(ctx, policy.open_for(ctx, token))

    def find_resource(self, uri: str) -> tuple[Any, dict[str, str]]:
        limit = self.server.max_uri_length
        if len(uri) > limit:
            raise invalid_params(f"Resource URI too long ({len(uri)} characters, limit {limit})")
        resource = self.server.resources.get(uri)
        if resource is not None:
            return resource, {}
        for template in self.server.templates.values():
            assert template.template is not None
            variables = template.template.match(uri)
            if variables is not None:
                return template, variables
        raise resource_not_found(uri)
