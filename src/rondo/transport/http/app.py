"""Streamable HTTP as a plain ASGI application.

POST only on the 2026-07-28 wire. A request is answered with one JSON body, unless its handler
emits a notification first: then the answer becomes an SSE stream of those notifications
followed by the result. Checks run in the order the conformance contract fixes: Host/Origin,
body size, JSON, routing headers, `_meta`, header/`_meta` version match, version support,
method, `Mcp-Param-*`, handler.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

import msgspec

from ...core.express import answer_tool
from ...core.failures import masked_internal_error
from ...server.request import Request
from ...wire.bounds import may_be_deep, nesting_error, too_deep
from ...wire.envelope import check_version, envelope
from ...wire.era import MODERN, has_modern_meta, http_era
from ...wire.errors import (
    DECODE_ERRORS,
    HEADER_MISMATCH,
    INVALID_REQUEST,
    SERVER_BUSY,
    McpError,
    http_status,
    internal_error,
    undecodable,
)
from ...wire.headers import HeaderValueError, check_param_headers, decode_value
from ...wire.jsonrpc import error_response, not_an_object, readable_id, request_shape
from ...wire.meta import NAME_FIELDS
from .asgi import (
    KEEPALIVE_FRAME,
    SSE_HEADERS,
    Headers,
    Receive,
    Scope,
    Send,
    header_map,
    header_value,
    send_error,
    send_json,
    send_plain,
    sse_frame,
)
from .checks import header_problem
from .pending import PendingNotes
from .verdicts import HeaderFacts, Verdicts

if TYPE_CHECKING:
    from ...server.server import Server

log = logging.getLogger("rondo.http")

DEFAULT_MAX_BODY = 4 * 1024 * 1024
DEFAULT_MAX_PENDING = 1024
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
KEEPALIVE_SECONDS = 15.0
# A request still running after this long gets a watcher that cancels it if the client leaves.
DISCONNECT_WATCH_AFTER = 0.1

_decode = msgspec.json.decode
_ROUTING = (b"mcp-method", b"mcp-name", b"mcp-protocol-version")


class Disconnected(Exception):
    pass


class BodyTooLarge(Exception):
    pass


def _hostname(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        return host[: end + 1] if end != -1 else host
    return host.rsplit(":", 1)[0] if ":" in host else host


def _host_refusal(headers: Headers, allowed: frozenset[str] | None) -> str:
    """The 403's message: which header named what, and the setting that allows it."""
    host = headers.get(b"host")
    if not host:
        return "Forbidden: the request has no Host header"
    origin = headers.get(b"origin")
    host_ok = allowed is None or _hostname(host[0].decode("latin-1")) in allowed
    what = f"Origin {_shown(origin[0])}" if origin and host_ok else f"Host {_shown(host[0])}"
    return (f"Forbidden: {what} is not allowed; add its host name to server.asgi(allowed_hosts=...) "
            "or rondo run --allowed-hosts")


def _shown(value: bytes) -> str:
    """A header value fit to echo in a message: printable ASCII, at most 100 characters."""
    text = "".join(c if " " <= c <= "~" else "?" for c in value.decode("latin-1")[:100])
    return repr(text + ("..." if len(value) > 100 else ""))


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
        self.server = server
        self.core = server.core
        self.path = path.rstrip("/") if path else None
        self.max_body = max_body
        self.allowed_hosts = (
            None if allowed_hosts is None else frozenset(_hostname(h) for h in allowed_hosts)
        )
        self._hosts_seen: dict[bytes, bool] = {}  # Host value -> allowed (see _host_ok)
        self._verdicts = Verdicts(self._host_ok)  # header block -> what the checks said
        self.keepalive = keepalive
        _warn_process_key(server)
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
        return self._running()

    @contextlib.asynccontextmanager
    async def _running(self) -> AsyncIterator[None]:
        bus = self.core.subscriptions.bus  # fleet hook: subscribed before serving
        if bus is not None:
            await bus.start()
        try:
            async with self.server.started():
                try:
                    yield
                finally:
                    if self.legacy is not None:
                        await self.legacy.shutdown()  # sessions end before the user's resources
        finally:
            if bus is not None:
                await bus.stop()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        try:
            running = self.lifespan()
            await running.__aenter__()
        except Exception as exc:
            log.error("lifespan start-up failed", exc_info=exc)
            await send({"type": "lifespan.startup.failed", "message": f"{type(exc).__name__}: {exc}"})
            return
        await send({"type": "lifespan.startup.complete"})
        while (await receive())["type"] != "lifespan.shutdown":
            pass
        try:
            await running.__aexit__(None, None, None)
        except Exception as exc:
            log.error("lifespan shutdown failed", exc_info=exc)
            await send({"type": "lifespan.shutdown.failed", "message": f"{type(exc).__name__}: {exc}"})
            return
        await send({"type": "lifespan.shutdown.complete"})

    def _at_endpoint(self, scope: Scope) -> bool:
        if self.path is None:
            return True
        path: str = scope.get("path", "")
        if path == self.path and not scope.get("root_path"):
            return True  # the usual request, unmounted
        root: str = scope.get("root_path", "")
        if root and path.startswith(root):
            return path[len(root):].rstrip("/") == ""  # mounted: the mount point is the endpoint
        return path.rstrip("/") == self.path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await self._lifespan(receive, send)
            return
        guard = self.guard
        if guard is not None and scope.get("path", "") in guard.metadata_paths:
            await guard.metadata(scope["method"], send)
            return
        if not self._at_endpoint(scope):
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
            host_ok = self._host_ok(headers)
        if refused is not None:
            await send_error(send, None, refused[1], refused[0])
            return
        if not host_ok:
            await send_json(send, 403, {"jsonrpc": "2.0", "error": {
                "code": INVALID_REQUEST, "message": _host_refusal(headers, self.allowed_hosts)}})
            return
        if guard is not None:
            principal = guard.cached(headers)
            if principal is None:
                principal = await guard.authenticate(headers, send)
                if principal is None:
                    return  # refused: 401, 400 or 503 already sent
            scope["auth"] = principal
        if facts is None:
            if self.legacy is not None and method in ("GET", "DELETE"):
                await self.legacy.handle_http(scope, receive, send, headers, None)
                return
            await send_plain(send, 405, b"Method Not Allowed", [(b"allow", b"POST")])
            return
        try:
            body = await self._read_body(headers, receive)
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
            response = calls.answer(body, self._keeper(notes), scope.get("auth"),
                                    (facts.tool_name, facts.version),
                                    None if guard is None else guard.allows_tool,
                                    scope.get("client"))
            if response is not None:
                await self._send_inline(send, response, notes)
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
        if b"mcp-session-id" not in headers and has_modern_meta(msg):
            era = MODERN  # the usual 2026-07-28 request, without asking the headers
        else:
            era = http_era(msg, header_value(headers, b"mcp-session-id"),
                           header_value(headers, b"mcp-protocol-version"))
        if era != MODERN:
            if self.legacy is not None:
                await self.legacy.handle_http(scope, receive, send, headers, msg)
                return
            await send_error(send, readable_id(msg), McpError(
                INVALID_REQUEST,
                "This endpoint speaks MCP 2026-07-28: send per-request _meta and MCP-Protocol-Version",
            ))
            return
        await self._modern(msg, facts, scope, receive, send)

    # -- checks --------------------------------------------------------------------------------

    def _host_ok(self, headers: Headers) -> bool:
        allowed = self.allowed_hosts
        if allowed is None:
            return True
        host = headers.get(b"host")
        if not host:
            return False
        seen = self._hosts_seen
        ok = seen.get(host[0])
        if ok is None:
            # Every request names the same few hosts: judge each distinct value once (bounded).
            ok = _hostname(host[0].decode("latin-1")) in allowed
            if len(seen) >= 256:
                seen.clear()
            seen[host[0]] = ok
        if not ok:
            return False
        origin = headers.get(b"origin")
        if origin:
            value = origin[0].decode("latin-1").strip().lower()
            scheme, sep, rest = value.partition("://")
            if not sep or scheme not in ("http", "https"):
                return False
            if _hostname(rest.split("/", 1)[0]) not in allowed:
                return False
        return True

    async def _read_body(self, headers: Headers, receive: Receive) -> bytes:
        length = headers.get(b"content-length")
        if length:
            try:
                if int(length[0]) > self.max_body:
                    raise BodyTooLarge
            except ValueError:
                pass
        message = await receive()
        if message["type"] == "http.request" and not message.get("more_body", False):
            body: bytes = message.get("body", b"")  # the usual request: one message
            if len(body) > self.max_body:
                raise BodyTooLarge
            return body
        chunks: list[bytes] = []
        size = 0
        while True:
            if message["type"] == "http.disconnect":
                raise Disconnected
            chunk = message.get("body", b"")
            if chunk:
                size += len(chunk)
                if size > self.max_body:
                    raise BodyTooLarge
                chunks.append(chunk)
            if not message.get("more_body", False):
                break
            message = await receive()
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    # -- the 2026-07-28 request path -------------------------------------------------------------

    async def _modern(
        self,
        msg: dict[str, Any],
        facts: HeaderFacts,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        rid = None
        headers = facts.headers
        try:
            rid, method, params, is_request = request_shape(msg)
            if not is_request:
                await send_plain(send, 202)
                return
            tool = None
            if method == "tools/call":
                name = params.get("name")
                tool = self.server.tools.get(name) if type(name) is str else None
            # The usual routing (`verdicts.plain_tool_name`) naming this very tool passes every
            # routing check; anything else runs them for its exact error.
            if tool is None or tool.header_name is None or facts.tool_name != tool.header_name:
                _check_routing(headers, method, params)
            env = envelope(params)
            if facts.version != env.version:  # equal: the check passes
                _check_header(headers, b"mcp-protocol-version", "MCP-Protocol-Version", env.version)
            check_version(env)
            if tool is not None and tool.header_params:
                problem = check_param_headers(
                    lambda name: header_value(headers, name.encode(), " \t"),
                    tool.header_params, params.get("arguments"))
                if problem is not None:
                    raise _mismatch(problem)
        except McpError as exc:
            await send_error(send, readable_id(msg), exc)
            return
        if self.guard is not None:
            needed = self.guard.insufficient(method, params, scope.get("auth"))
            if needed:
                await self.guard.forbid(send, rid, needed)
                return
        core = self.core
        if tool is not None and tool.express and core.express:
            notes: list[dict[str, Any]] = []
            response = answer_tool(core, rid, params, env, self._keeper(notes), scope.get("auth"),
                                   scope.get("client"))
            if response is not None:
                await self._send_inline(send, response, notes)
                return
        await self._answer(rid, method, params, env, scope, receive, send)

    def _keeper(self, notes: list[dict[str, Any]]) -> Callable[[dict[str, Any]], None]:
        """`emit` for a request answered inline: notifications wait for the answer, and a
        plain handler cannot wait for the client to read them, so those beyond the cap drop."""
        cap = self.max_pending

        def keep(note: dict[str, Any]) -> None:
            if len(notes) < cap:
                notes.append(note)

        return keep

    @staticmethod
    def _send_inline(
        send: Send, response: dict[str, Any], notes: list[dict[str, Any]]
    ) -> Awaitable[None]:
        """One JSON answer, or an SSE body of the notifications and then the answer. (A plain
        def returning the writer's coroutine: no frame of its own per request.)"""
        if not notes:
            error = response.get("error")
            return send_json(send, http_status(error["code"]) if error is not None else 200, response)
        notes.append(response)
        return _send_sse(send, notes)

    async def _answer(
        self,
        rid: Any,
        method: str,
        params: dict[str, Any],
        env: Any,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        core = self.core
        if not core.may_suspend(method, params):
            # Nothing to wait for: run inline, no task, no disconnect watcher.
            notes: list[dict[str, Any]] = []
            try:
                result = await core.dispatch(
                    Request(rid, method, params, env, core.modern, emit=self._keeper(notes),
                            auth=scope.get("auth"), headers=scope.get("headers", ()),
                            peer=scope.get("client")))
                response: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "result": result}
            except McpError as exc:
                response = error_response(rid, exc)
            except Exception:
                response = error_response(rid, masked_internal_error(
                    log, f"unexpected failure answering {rid!r}"))
            await self._send_inline(send, response, notes)
            return
        # It may wait: run it as a task, stream what it emits meanwhile.
        auth = scope.get("auth")
        loop = asyncio.get_running_loop()
        queue = PendingNotes(self.max_pending)
        wake: asyncio.Future[None] = loop.create_future()
        state: dict[str, Any] = {"wake": wake}

        def poke() -> None:
            w = state["wake"]
            if not w.done():
                w.set_result(None)

        def emit(note: dict[str, Any]) -> None:
            if queue.add(note):
                poke()
            elif not state.get("overflow"):
                # The client is not reading: drop it (a listen stream leaves the fan-out)
                # rather than buffer without bound.
                state["overflow"] = True
                log.warning("dropping request %r: %d notifications unread", rid, len(queue))
                task.cancel()

        task = loop.create_task(
            core.dispatch(Request(rid, method, params, env, core.modern, emit=emit, auth=auth,
                                 headers=scope.get("headers", ()), peer=scope.get("client"))))
        task.add_done_callback(lambda _t: poke())
        watcher: asyncio.Task[None] | None = None

        def watch() -> None:
            nonlocal watcher
            if not task.done():
                watcher = loop.create_task(_cancel_on_disconnect(receive, task))

        timer = loop.call_later(DISCONNECT_WATCH_AFTER, watch)
        try:
            await wake
            if task.done() and not queue:
                await _json_result(send, rid, task)
                return
            await self._stream(rid, task, queue, state, loop, send)
        finally:
            timer.cancel()
            if watcher is not None:
                watcher.cancel()
            if not task.done():
                task.cancel()

    async def _stream(
        self,
        rid: Any,
        task: asyncio.Task[Any],
        queue: PendingNotes,
        state: dict[str, Any],
        loop: asyncio.AbstractEventLoop,
        send: Send,
    ) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        try:
            while True:
                if queue:
                    batch = b"".join(sse_frame(note) for note in queue.take())
                    queue.sending = True
                    await send({"type": "http.response.body", "body": batch, "more_body": True})
                    queue.sending = False
                if task.done():
                    break
                state["wake"] = wake = loop.create_future()
                try:
                    await asyncio.wait_for(asyncio.shield(wake), self.keepalive)
                except TimeoutError:
                    await send({"type": "http.response.body", "body": KEEPALIVE_FRAME, "more_body": True})
            final = _final(rid, task) if not state.get("overflow") else error_response(rid, McpError(
                SERVER_BUSY, f"Stream closed: the client did not read {self.max_pending} "
                             "pending notifications"))
            await send({"type": "http.response.body", "body": sse_frame(final), "more_body": False})
        except OSError:
            task.cancel()


async def _send_sse(send: Send, frames: list[dict[str, Any]]) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
    await send({"type": "http.response.body", "body": b"".join(sse_frame(n) for n in frames)})


def _warn_process_key(server: Server) -> None:
    from ...core.replicas import check_fleet  # fleet hook: a replica refuses a per-process key

    check_fleet(server)
    policy = server.state_policy
    if policy is None:
        return
    from ...state.keys import ENV_KEYS

    if policy.ephemeral:
        # Its own logger, so one process that means it can silence exactly this note.
        logging.getLogger("rondo.http.state_key").warning(
            "rondo: %s is not set, so request state is sealed with a key made at start-up. "
            "Fine for one process (like a demo); with several workers, or after a restart, a "
            "client's next round would be refused. To share keys, set %s (`python -m "
            "rondo.state` prints one). To silence this note for one process, "
            "logging.getLogger(\"rondo.http.state_key\").disabled = True.",
            ENV_KEYS, ENV_KEYS,
        )


async def _cancel_on_disconnect(receive: Receive, task: asyncio.Task[Any]) -> None:
    while not task.done():
        message = await receive()
        if message["type"] == "http.disconnect":
            task.cancel()
            return


def _final(rid: Any, task: asyncio.Task[Any]) -> dict[str, Any]:
    if task.cancelled():
        return error_response(rid, internal_error("Request cancelled"))
    exc = task.exception()
    if exc is None:
        return {"jsonrpc": "2.0", "id": rid, "result": task.result()}
    if isinstance(exc, McpError):
        return error_response(rid, exc)
    return error_response(rid, masked_internal_error(
        log, f"unexpected failure answering {rid!r}", exc))


async def _json_result(send: Send, rid: Any, task: asyncio.Task[Any]) -> None:
    response = _final(rid, task)
    error = response.get("error")
    status = http_status(error["code"]) if error is not None else 200
    await send_json(send, status, response)


def _mismatch(message: str) -> McpError:
    return McpError(HEADER_MISMATCH, f"Header mismatch: {message}")


def _check_routing(headers: Headers, method: str, params: dict[str, Any]) -> None:
    """Each routing header at most once; `Mcp-Method` and `Mcp-Name` mirror the body."""
    for header in _ROUTING:
        if len(headers.get(header, ())) > 1:
            raise _mismatch(f"{header.decode()} header given more than once")
    _check_header(headers, b"mcp-method", "Mcp-Method", method)
    field = NAME_FIELDS.get(method)
    if field is not None:
        _check_name(headers, field, params.get(field))


def _check_header(headers: Headers, name: bytes, label: str, expected: str) -> None:
    value = header_value(headers, name, " \t")
    if value is None:
        raise _mismatch(f"{label} header is required")
    if value != expected:
        raise _mismatch(f"{label} header value {value!r} does not match body value {expected!r}")


def _check_name(headers: Headers, field: str, expected: Any) -> None:
    raw = header_value(headers, b"mcp-name", " \t")
    if raw is None:
        raise _mismatch("Mcp-Name header is required")
    try:
        value = decode_value(raw)
    except HeaderValueError as exc:
        raise _mismatch(f"Mcp-Name: {exc}") from None
    if value != expected:
        raise _mismatch(f"Mcp-Name header value {value!r} does not match body {field} {expected!r}")
