"""Streamable HTTP as a plain ASGI application: `HttpApp`, one MCP endpoint.

POST only on the 2026-07-28 wire (GET and DELETE for 2025-11-25 sessions, `legacy.py`). The
app runs the checks of `inbound.py` in the order the conformance contract fixes: endpoint,
headers alone, Host/Origin, auth, method, body size, JSON, nesting, era, routing headers,
`_meta`, header/`_meta` version match, version support, `Mcp-Param-*`; then the handler,
answered by `answer.py` (one JSON body, or an SSE stream of notifications and the result).
"""

from __future__ import annotations

from collections.abc import Coroutine, Iterable
from typing import TYPE_CHECKING, Any

import msgspec

from ...core.express import answer_tool
from ...wire.bounds import may_be_deep, nesting_error, too_deep
from ...wire.era import MODERN
from ...wire.errors import DECODE_ERRORS, INVALID_REQUEST, McpError, undecodable
from ...wire.jsonrpc import not_an_object, readable_id
from ...wire.meta import PROGRESS_TOKEN
from .answer import DISCONNECT_WATCH_AFTER, answer, keeper, quiet_lane, send_inline
from .asgi import Receive, Scope, Send, header_map, send_error, send_json, send_plain
from .body import BodyTooLarge, Disconnected, read_body
from .inbound import (
    LOOPBACK_HOSTS,
    NOT_MODERN,
    HostCheck,
    at_endpoint,
    checked_request,
    era_of,
    header_problem,
    host_refusal,
    method_route,
)
from .late_watch import LateWatch
from .lifespan import check_start, lifespan_protocol, running
from .verdicts import HeaderFacts, Verdicts

if TYPE_CHECKING:
    from ...server.request import Emit
    from ...server.server import Server

DEFAULT_MAX_BODY = 4 * 1024 * 1024
DEFAULT_MAX_PENDING = 1024
KEEPALIVE_SECONDS = 15.0

_decode = msgspec.json.decode


class HttpApp:
    """ASGI app serving one MCP endpoint.

    `allowed_hosts` guards against DNS rebinding: requests whose Host (or Origin, when present)
    names another host get 403. The default allows only loopback names; pass your public host
    names when deploying, or `None` to turn the check off (e.g. behind a proxy that checks).

    The path rule: the mount point is the endpoint. Mounted by a framework that sets the ASGI
    `root_path` (Starlette and FastAPI `app.mount("/mcp", app)`), it answers at the mount point
    (`/mcp/`; Starlette redirects `/mcp` there with a 307 the clients follow) and 404s below
    it. Served on its own (uvicorn, `run_http`) the mount point is `path`, default `/mcp`,
    with or without a trailing slash. `path=None` answers on any path (for a router that sets
    no `root_path`).

    `lifespan` is a Starlette/FastAPI-style lifespan (`FastAPI(lifespan=mcp.lifespan)`) running
    the server's `@server.lifespan` hooks; the ASGI lifespan protocol runs it too.
    """

    def __init__(
        self,
        server: Server,
        *,
        path: str | None = "/mcp",
        max_body: int = DEFAULT_MAX_BODY,
        allowed_hosts: Iterable[str] | None = LOOPBACK_HOSTS,
        keepalive: float = KEEPALIVE_SECONDS,
        legacy: Any = True,
        max_pending: int = DEFAULT_MAX_PENDING,
        auth: Any = None,
    ) -> None:
        if not isinstance(max_body, int) or max_body < 1:
            raise ValueError("max_body must be a positive number of bytes")
        if not isinstance(max_pending, int) or max_pending < 1:
            raise ValueError("max_pending must be a positive number of notifications")
        # Notifications one SSE answer may hold for a client that does not read (docs/limits.md).
        self.max_pending = max_pending
        # Disconnect watchers of the calls that wait in their request's own task (answer.py).
        self.late_watch = LateWatch(DISCONNECT_WATCH_AFTER)
        self.server = server
        self.core = server.core
        self.path = path.rstrip("/") if path else None
        self.max_body = max_body
        self.host_ok = HostCheck(allowed_hosts)  # Host and Origin (DNS rebinding)
        self.allowed_hosts = self.host_ok.allowed
        self._verdicts = Verdicts(self.host_ok)  # header block -> what the checks said
        self.keepalive = keepalive
        check_start(server)
        # rondo.auth hook: an OAuth resource server guards the endpoint when configured.
        self.guard: Any = None
        auth = server.auth if auth is None else auth
        if auth is not None:
            from ...auth.guard import HttpGuard

            if server.auth is None:
                server.auth = auth  # list filtering in the core reads it
            elif server.auth is not auth:
                raise ValueError("this server already has another ResourceServer (Server(auth=...))")
            self.guard = HttpGuard(server, auth, self.path)
        # The 2025-11-25 era (sessions): True for the defaults, a LegacyConfig, or False for none.
        self.legacy: Any = None
        if legacy:
            from .legacy import LegacyHttp

            self.legacy = LegacyHttp(self, None if legacy is True else legacy)

    # -- ASGI entry --------------------------------------------------------------------------

    @property
    def well_known(self) -> Any:
        """The protected resource metadata (RFC 9728) as an ASGI app of its own, for a server
        mounted under a framework: clients look for it at the origin's root
        (`/.well-known/oauth-protected-resource/mcp`), which a mounted app never sees. Mount it
        there: `app.mount("/.well-known/oauth-protected-resource", mcp.well_known)`. It answers
        the metadata paths only (404 elsewhere). A server without `auth=` has none: ValueError."""
        guard = self.guard
        if guard is None:
            raise ValueError("well_known serves OAuth protected resource metadata: this server "
                             "has no auth= (rondo.auth.ResourceServer)")

        async def metadata(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                return
            if scope.get("path", "") in guard.metadata_paths:
                await guard.metadata(scope["method"], send)
            else:
                await send_plain(send, 404, b"Not Found")

        return metadata


    def lifespan(self, app: Any = None) -> Any:
        """What this app needs around serving, as an async context manager in the shape
        Starlette and FastAPI take for `lifespan=`: the fleet bus (subscribed before serving),
        the server's `@server.lifespan` hooks, and at shutdown the end of legacy sessions."""
        return running(self.server, self.legacy)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await lifespan_protocol(self.lifespan, receive, send)
            return
        guard = self.guard
        if guard is not None:
            path = scope.get("path", "")
            if path in guard.metadata_paths:
                await guard.metadata(scope["method"], send)
                return
            if path in guard.endpoint_paths:  # the authorization facade's own paths
                await guard.rs.endpoints(scope, receive, send)
                return
        if not at_endpoint(self.path, scope):
            await send_plain(send, 404, b"Not Found")
            return
        method = scope["method"]
        facts: HeaderFacts | None = None
        if method == "POST":
            facts = self._verdicts.facts(scope)  # a repeated header block is judged once
            headers = facts.headers
            refused = facts.refused
            host_ok = facts.host_ok
        else:
            headers = header_map(scope)
            refused = header_problem(headers, method)
            host_ok = self.host_ok(headers)
        if refused is not None:
            await send_error(send, None, refused[1], refused[0])
            return
        if not host_ok:
            await send_json(send, 403, {"jsonrpc": "2.0", "error": {
                "code": INVALID_REQUEST, "message": host_refusal(headers, self.allowed_hosts)}})
            return
        if guard is not None:
            principal = guard.cached(headers)
            if principal is None:
                principal = await guard.authenticate(headers, send)
                if principal is None:
                    return  # refused: 401, 400 or 503 already sent
            scope["auth"] = principal
        if facts is None:
            if method_route(method, self.legacy is not None) is not None:
                await self.legacy.handle_http(scope, receive, send, headers, None)
                return
            await send_plain(send, 405, b"Method Not Allowed", [(b"allow", b"POST")])
            return
        try:
            body = await read_body(headers, receive, self.max_body)
        except BodyTooLarge:
            await send_error(send, None, McpError(INVALID_REQUEST, "Request body too large"), 413)
            return
        except Disconnected:
            return
        core = self.core
        deep = may_be_deep(body)
        if (not deep and core.express and facts.tool_name is not None
                and facts.tool_name in (calls := core.typed or core.typed_calls()).header_names
                and b"mcp-session-id" not in headers):
            # The usual plain call: checked and decoded by the typed lane in one pass.
            notes: list[dict[str, Any]] = []
            response = calls.answer(body, keeper(notes, self.max_pending), scope.get("auth"),
                                    (facts.tool_name, facts.version),
                                    None if guard is None else guard.allows_tool,
                                    scope.get("client"))
            if response is not None:
                await send_inline(send, response, notes)
                return
        try:
            msg = _decode(body)
        except DECODE_ERRORS as exc:
            await send_error(send, *undecodable(body, exc))
            return
        if not isinstance(msg, dict):
            await send_error(send, None, not_an_object(msg))
            return
        if deep and too_deep(msg):
            await send_error(send, readable_id(msg), nesting_error())
            return
        if era_of(msg, headers) != MODERN:
            if self.legacy is not None:
                await self.legacy.handle_http(scope, receive, send, headers, msg)
                return
            await send_error(send, readable_id(msg), McpError(INVALID_REQUEST, NOT_MODERN))
            return
        await self._modern(msg, facts, scope, receive, send)

    # -- the 2026-07-28 request path -------------------------------------------------------------

    async def _modern(
        self,
        msg: dict[str, Any],
        facts: HeaderFacts,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        try:
            checked = checked_request(msg, facts.headers, facts.version, facts.tool_name,
                                      self.server.tools)
        except McpError as exc:
            await send_error(send, readable_id(msg), exc)
            return
        if checked is None:
            await send_plain(send, 202)  # a notification or a response
            return
        rid, method, params, env, tool = checked
        if self.guard is not None:
            needed = self.guard.insufficient(method, params, scope.get("auth"))
            if needed:
                await self.guard.forbid(send, rid, needed)
                return
        core = self.core
        if tool is not None and tool.express and core.express:
            notes: list[dict[str, Any]] = []
            response = answer_tool(core, rid, params, env, keeper(notes, self.max_pending),
                                   scope.get("auth"), scope.get("client"))
            if response is not None:
                await send_inline(send, response, notes)
                return
        elif tool is not None and tool.relay is not None:
            # A proxy's tool: the relay lane, imported by the first such call (a server without
            # one never loads it).
            from ...core.relay import may_relay, relay_call
            if may_relay(core, tool):
                auth, peer = scope.get("auth"), scope.get("client")

                def lane(emit: Emit) -> Coroutine[Any, Any, dict[str, Any]]:
                    assert tool is not None
                    return relay_call(core, rid, tool, params, env, emit, auth, peer)

                if env.log_level is None and PROGRESS_TOKEN not in env.meta:
                    # Asked for neither progress nor log messages: nothing of it can stream,
                    # so it waits in the request's own task.
                    await quiet_lane(self, rid, lane, receive, send)
                else:
                    await answer(self, rid, method, params, env, scope, receive, send, lane)
                return
        await answer(self, rid, method, params, env, scope, receive, send)
