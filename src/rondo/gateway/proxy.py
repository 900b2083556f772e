"""`proxy(upstream)`: another MCP server, served as a `rondo.Server`.

The upstream is a Streamable HTTP URL or a command line (stdio); `rondo.Client` speaks to it.
When the proxy's lifespan starts it connects, pages through the upstream's tools, prompts,
resources and templates, and registers one relaying component for each; every call goes
through the proxy's own core, so the proxy serves both eras downstream whatever the upstream
speaks.

Input rounds are relayed without memory. A 2026-07-28 upstream's `input_required` becomes the
proxy's own `InputRequired`: the same input requests, and a state holding the upstream's
`requestState` and the upstream's identity, which the proxy's `StatePolicy` seals (bound to
the method, the name and arguments, the principal). The retry's state is opened by the policy
before the handler runs, so a tampered or crossed state is refused with -32602 and never reaches
the upstream; then the upstream's state is echoed to it with the client's answers. A 2025-11-25
client gets the same rounds over its session (rondo's legacy dialect plays the retrying client).

The client's credentials never go upstream: the upstream client carries only the headers given
to `proxy(headers=...)`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import logging
from collections.abc import AsyncIterator, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..auth.principal import CALLER, Principal
from ..client import Client, ClientError, PendingCall, RequestTimeout
from ..client.errors import ProtocolError
from ..client.loop import NoHandler
from ..client.mcpjson import ServerEntry
from ..client.types import CallToolResult, GetPromptResult, ReadResourceResult
from ..mrtr.result import InputRequired
from ..server.components import Prompt
from ..server.content import ToolResult, as_block, is_content_block
from ..server.context import Context
from ..server.server import Server
from ..wire.errors import MISSING_CAPABILITY, McpError
from ..wire.meta import CLIENT_CAPABILITIES, LOG_LEVEL, LOG_LEVEL_RANK, PROGRESS_TOKEN
from .listcache import UPSTREAM, Freshness, ListRefresh
from .supervise import Restart
from .tasks import TaskPassThrough, TaskRelay, upstream_capabilities
from .transform import upstream_tags
from .updates import MAX_WATCHED, ResourceWatch, follow_listen
from .upstream_errors import clip as _clip
from .upstream_errors import passed_on

if TYPE_CHECKING:
    from .bridge.relay import Bridge

log = logging.getLogger("rondo.gateway")

UNAVAILABLE = -32603
MAX_ROUNDS = 16  # input rounds one relayed request may take (a downstream rondo.Client: 10)
MAX_RESPONSE = 16 * 1024 * 1024  # one upstream HTTP answer or SSE event, in bytes
_INPUT_KINDS = ("elicitation", "sampling", "roots")
_LISTS = {"notifications/tools/list_changed": "tools",
          "notifications/prompts/list_changed": "prompts",
          "notifications/resources/list_changed": "resources"}
PROXY_ENV = "RONDO_PROXY"  # `rondo proxy`: the JSON configuration gateway/served.py reads
_ANY_HINTS: dict[str, Any] = {"ctx": Context, "arguments": Any, "return": Any}
# The downstream request a relayed upstream request serves: where the upstream's log messages,
# heard while that request is in flight on its own HTTP response, are passed on.
_RELAYING: contextvars.ContextVar[Context | None] = contextvars.ContextVar(
    "rondo_proxy_relaying", default=None)


async def _refuse(*_: Any) -> Any:
    # NoHandler: answered -32601 with this text, without a traceback in the proxy's log.
    raise NoHandler("the proxy answers an upstream's mid-call request only with a bridge "
                    "(proxy(bridge='hold'|'replay'), `rondo proxy --bridge`)")


class Upstream:
    """The proxy's link to one upstream: its client, its identity, and the relay of one round."""

    def __init__(self, target: str | Sequence[str], *, headers: Mapping[str, str] | None,
                 timeout: float, protocol: str | None, auth: Any = None,
                 env: Mapping[str, str] | None = None, cwd: str | None = None,
                 label: str | None = None) -> None:
        if isinstance(target, str):
            if not target.startswith(("http://", "https://")):
                raise ValueError("an upstream is an http(s) URL or a command line (a list of "
                                 f"strings), got {target!r}")
            kind = "url"
        elif (isinstance(target, Sequence) and target
              and all(isinstance(part, str) for part in target)):
            target = list(target)
            kind = "command"
        else:
            raise ValueError("an upstream is an http(s) URL or a command line (a list of strings)")
        if not isinstance(timeout, int | float) or timeout <= 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.target = target
        self.kind = kind
        self.headers = dict(headers or {})
        if auth is not None and kind != "url":
            raise ValueError("upstream_auth= is for an http(s) upstream")
        self.auth = auth  # an httpx.Auth (TokenExchange.upstream_auth, ClientCredentials)
        if kind == "url" and (env or cwd):
            raise ValueError("env= and cwd= go with a command line upstream, not a URL")
        self.env = dict(env or {})
        self.cwd = cwd
        self.timeout = float(timeout)
        self.protocol = protocol
        # Who the sealed state names: a digest, so no internal URL or command reaches a client.
        self.identity = hashlib.sha256(repr((kind, target)).encode()).hexdigest()[:16]
        self.label = label or self.identity  # how logs name it (a gateway: its mcp.json name)
        self.client: Client | None = None
        # What this link registered on the proxy, by list, so a list_changed can redo it.
        self.registered: dict[str, set[str]] = {"tools": set(), "prompts": set(),
                                                "resources": set()}
        self.changes: asyncio.Queue[str] | None = None  # list_changed from a 2025 upstream
        self.bridge: Bridge | None = None  # a 2025-11-25 upstream's questions as input rounds
        self.restart = Restart()  # how a stdio upstream that exits is started again
        self.max_rounds = MAX_ROUNDS  # input rounds one relayed request may take
        self.sse = False  # a URL of the 2024-11-05 HTTP+SSE transport (an mcp.json "sse" entry)
        self.max_response = MAX_RESPONSE  # bytes of one upstream HTTP answer (or SSE event)
        self.server: Server | None = None  # the proxy serving this link (its updates go there)
        self.watched: set[str] = set()  # URIs subscribed upstream (gateway/updates.py)
        self.rewatch: asyncio.Event | None = None  # set: reopen the modern listen stream
        self.listed: dict[str, str] = {}  # what each list held when last listed (repr)
        self.fresh = Freshness()  # how long each listed list is fresh (gateway/listcache.py)
        # A stdio upstream's relayed calls in flight: its log messages share one stream, so one
        # is that call's when it is the only one that can have sent it (`only_call`).
        self.calls: list[Context] | None = [] if kind == "command" else None

    def make_client(self) -> Client:
        target: Any = self.target
        if isinstance(self.target, str) and self.sse:  # a 2024-11-05 HTTP+SSE server
            from ..client.transports.legacy_sse import SseTransport

            target = SseTransport(self.target, headers=self.headers or None, auth=self.auth,
                                  max_event=self.max_response)
        elif isinstance(self.target, str):  # a URL: one origin, many requests, a lean pool
            from ..client.transports.http import HttpTransport
            from ..client.transports.http11 import Http11Pool

            target = HttpTransport(self.target, headers=self.headers or None, auth=self.auth,
                                   http_transport=Http11Pool(),
                                   max_response=self.max_response, max_event=self.max_response)
        return Client(
            target, protocol=self.protocol, name="rondo-proxy",
            headers=self.headers or None, auth=self.auth, timeout=self.timeout,
            max_timeout=self.timeout,
            probe_timeout=self.timeout,
            # Declared so the upstream may ask; the proxy's own admission checks each question
            # against what the downstream client declared (-32021) before relaying it.
            on_elicit=_refuse, on_sample=_refuse, on_roots=_refuse, elicit_modes=("form", "url"),
            on_notification=self._heard, extensions=[TaskPassThrough()],
            env=self.env if self.kind == "command" else None, cwd=self.cwd,
            stderr=self.stderr_line if self.kind == "command" else None,
        )

    def stderr_line(self, line: str) -> None:
        """A stdio upstream's stderr line, logged under `rondo.gateway` with every value of its
        configured `env` masked (a server that prints its own key must not put it in logs),
        also a key's first 4 or more characters ending the line (the transport cuts a long
        line, perhaps inside a key)."""
        for secret in self.env.values():
            if len(secret) >= 4:
                line = line.replace(secret, "***")
                cut = next((n for n in range(len(secret) - 1, 3, -1)
                            if line.endswith(secret[:n])), 0)
                line = line[:len(line) - cut] + "***" if cut else line
        log.info("upstream %s stderr: %s", self.label, line)

    def _heard(self, message: Mapping[str, Any]) -> None:
        """A 2025-11-25 upstream's list_changed (its session's notifications); a 2026-07-28
        upstream's come on the listen stream `_follow` holds. A log message heard on a relayed
        request's own response goes to that request's client (`ctx.log` applies the level the
        client asked for); one heard on a stdio upstream's shared stream goes to the one relayed
        call that can have sent it, and is dropped when there are several (`only_call`)."""
        if message.get("method") == "notifications/message":
            pass_on_log(message.get("params"), self.only_call() if self.calls else None)
            return
        if message.get("method") == "notifications/resources/updated":
            params = message.get("params")
            uri = params.get("uri") if isinstance(params, Mapping) else None
            if isinstance(uri, str) and uri in self.watched and self.server is not None:
                self.server.notify_resource_updated(uri)
            return
        what = _LISTS.get(str(message.get("method")))
        client = self.client
        if what is not None and self.changes is not None and client is not None \
                and client.era == "legacy":
            self.changes.put_nowait(what)

    async def watch(self, uri: str) -> None:
        """A downstream client subscribed to `uri`: subscribe upstream once (bounded)."""
        client = self.client
        if uri in self.watched or client is None or len(self.watched) >= MAX_WATCHED:
            return
        if not ((client.server_capabilities or {}).get("resources") or {}).get("subscribe"):
            return
        self.watched.add(uri)
        if client.era == "legacy":
            try:
                await client.request("resources/subscribe", {"uri": uri})
            except (ClientError, McpError, OSError) as exc:
                self.watched.discard(uri)
                log.warning("upstream %s: cannot subscribe to a resource: %s", self.identity,
                            _clip(str(exc)))
        elif self.rewatch is not None:
            self.rewatch.set()  # the follower reopens its listen stream with this URI too

    async def relay(self, ctx: Context, method: str, params: dict[str, Any], *,
                    tool_body: bool = False) -> Any:
        """One round of `method` upstream: the final result, or `InputRequired` to relay.
        `tool_body` (a `tools/call` on the relay lane): a 2026-07-28 upstream's final result
        is taken as sent (`Client.resume(raw=True)`) and answered as the proxy's result
        object (`_raw_tool_body`), without the typed `CallToolResult` in between."""
        client = self.client
        if client is None:
            raise McpError(UNAVAILABLE, "upstream unavailable: not connected")
        if self.bridge is not None and client.era == "legacy":
            bridged = await self.bridge.relay(ctx, method, params)  # gateway/bridge/
            return (_tool_body(bridged) if tool_body and isinstance(bridged, CallToolResult)
                    else bridged)
        state = ctx.state
        if state is not None and (not isinstance(state, dict) or state.get("up") != self.identity):
            raise McpError(-32602, "invalid requestState: not this upstream's")
        # The upstream sees what this request's client can answer (its input kinds only), so
        # it asks only what the client declared, as it would if called directly.
        declared = ctx.client_capabilities
        asks: dict[str, Any] = {}
        if declared:
            asks = {kind: declared[kind] for kind in _INPUT_KINDS if kind in declared}
            if "extensions" in declared:
                asks.update(upstream_capabilities(declared))
        meta: dict[str, Any] = {CLIENT_CAPABILITIES: asks}
        if ctx.log_level is not None:  # 2026-07-28 upstream: log at the client's own level
            meta[LOG_LEVEL] = ctx.log_level
        params["_meta"] = meta  # every caller's params are its own, made for this round
        relaying = _RELAYING.set(ctx)
        calls = self.calls
        if calls is not None:  # a stdio upstream: its log messages are matched to the call
            calls.append(ctx)
        # Whom this request is relayed for: `upstream_auth` exchanges that caller's token.
        caller = CALLER.set(ctx.auth if isinstance(ctx.auth, Principal) else None)
        try:
            pending = PendingCall(method=method, params=params,
                                  request_state=None if state is None else state.get("s"))
            # The answers as the client sent them (the retry's params copy them).
            result: Any = await client.resume(
                pending, ctx.input_responses, manual=True,
                on_progress=None if ctx.progress_token is None else _progress_of(ctx),
                raw=tool_body)
            if tool_body:  # 2026-07-28: the result as sent; a legacy one (the bridge) typed
                result = (_raw_tool_body(result) if type(result) is dict
                          else _tool_body(result) if isinstance(result, CallToolResult)
                          else result)  # a malformed one: ProtocolError, as convert
        except McpError as exc:
            data = exc.data if exc.code == MISSING_CAPABILITY else None
            raise passed_on(exc, data) from None
        except RequestTimeout:
            raise McpError(UNAVAILABLE, f"upstream did not answer within {self.timeout:g} s"
                           ) from None
        except (ClientError, OSError) as exc:
            log.warning("upstream %s: %s: %s", self.identity, type(exc).__name__,
                        _clip(str(exc)))
            raise McpError(UNAVAILABLE, "upstream unavailable") from None
        finally:
            CALLER.reset(caller)
            _RELAYING.reset(relaying)
            if calls is not None:
                calls.remove(ctx)
        if isinstance(result, PendingCall):
            # The round count rides in the sealed state, so an upstream that asks forever is
            # cut off without the proxy keeping anything between rounds.
            done = state.get("n", 0) if state is not None else 0
            rounds = (done if isinstance(done, int) else 0) + 1
            if rounds >= self.max_rounds:
                raise McpError(UNAVAILABLE, f"upstream asked for more than {self.max_rounds} "
                               "input rounds")
            return InputRequired(result.input_requests,
                                 state={"up": self.identity, "s": result.request_state,
                                        "n": rounds})
        return result

    def only_call(self) -> Context | None:
        """The one relayed call in flight that can have sent a log message heard on a stdio
        upstream's shared stream, else None. A 2026-07-28 upstream logs only for a request that
        asked (`_meta` log level), so only those count; a 2025-11-25 upstream's session level
        is the proxy's (`debug`), so every call in flight counts."""
        calls = self.calls
        if not calls:
            return None
        client = self.client
        if client is not None and client.era == "modern":
            asking = [ctx for ctx in calls if ctx.log_level is not None]
            return asking[0] if len(asking) == 1 else None
        return calls[0] if len(calls) == 1 else None


def pass_on_log(params: Any, fallback: Any = None) -> None:
    """An upstream's `notifications/message`, to the client of the relayed request it was
    heard on (`_RELAYING`), else to `fallback` (on a stdio upstream: the one call in flight
    that can have sent it)."""
    ctx: Any = _RELAYING.get()
    if ctx is None:
        ctx = fallback
    if ctx is None or not isinstance(params, Mapping) or params.get("level") not in LOG_LEVEL_RANK:
        return
    logger = params.get("logger")
    ctx.log(str(params["level"]), params.get("data"),
            logger if isinstance(logger, str) else None)


async def _complete(link: Upstream, ref: Any, argument: Any, context: Any) -> dict[str, Any]:
    """The proxy's completion hook: the upstream's completion for the same ref (the proxy
    serves the upstream's own prompt names and URIs, so the ref goes up unchanged)."""
    client = link.client
    if client is None:
        raise McpError(UNAVAILABLE, "upstream unavailable: not connected")
    try:
        done = await client.complete(
            ref, argument["name"], str(argument.get("value", "")),
            context={str(k): str(v) for k, v in context.items()}
            if isinstance(context, Mapping) and context else None)
    except McpError as exc:
        raise passed_on(exc) from None
    except RequestTimeout:
        raise McpError(UNAVAILABLE, f"upstream did not answer within {link.timeout:g} s"
                       ) from None
    except (ClientError, OSError) as exc:
        log.warning("upstream %s: %s: %s", link.identity, type(exc).__name__, exc)
        raise McpError(UNAVAILABLE, "upstream unavailable") from None
    out: dict[str, Any] = {"values": list(done.values)}
    if done.total is not None:
        out["total"] = done.total
    out["hasMore"] = done.has_more
    return out


def _progress_of(ctx: Context) -> Any:
    """The upstream's progress, passed on to a client that asked for progress (else None:
    the upstream request then carries no progress token)."""
    meta = ctx.request_params.get("_meta")
    if not isinstance(meta, Mapping) or meta.get(PROGRESS_TOKEN) is None:
        return None

    def passed_on(progress: float, total: float | None, message: str | None) -> None:
        ctx.report_progress(progress, total, message)

    return passed_on


def _drop_none(wire: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in wire.items() if value is not None}


def proxy(
    upstream: str | Sequence[str] | ServerEntry,
    *,
    name: str = "rondo-proxy",
    headers: Mapping[str, str] | None = None,
    timeout: float | None = None,
    upstream_protocol: str | None = None,
    upstream_auth: Any = None,
    bridge: Any = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    restart: Restart | None = None,
    must_connect: bool = True,
    max_rounds: int = MAX_ROUNDS,
    max_response: int = MAX_RESPONSE,
    transport: str | None = None,
    **server_options: Any,
) -> Server:
    """A `rondo.Server` serving `upstream`: an http(s) URL, a command line as a list, or an
    mcp.json entry (`rondo.client.load_mcp_json(...)["name"]`, bringing its own command, env,
    cwd, URL, headers and timeout).

    `env` and `cwd` are a command line's. A stdio upstream that exits is started again under
    `restart` (default `Restart()`: backoff from 0.5 s doubling to 30 s, 8 failed starts in a
    row at most; gateway/supervise.py). `must_connect=False` (a gateway's upstreams) lets the
    proxy start without its upstream and keep connecting in the background (it then advertises
    tools, prompts and resources from the start, so a client that initialized before the
    upstream answered hears `list_changed` when they come). `max_rounds`
    bounds the input rounds of one relayed request (-32603 past it), `max_response` the bytes
    of one upstream HTTP answer or SSE event (-32603 "upstream unavailable" past it).
    `transport="sse"` reaches a URL over the 2024-11-05 HTTP+SSE transport (the URL is the
    server's SSE endpoint, e.g. `.../sse`); the default for a URL is Streamable HTTP
    (`transport="http"`).

    `headers` are the proxy's own credentials for the upstream (never the client's);
    `timeout` bounds each upstream request, in seconds (default: the entry's, else 30); `upstream_protocol` pins the era spoken
    upstream (default: negotiated); `upstream_auth` is an `httpx.Auth` for an http(s)
    upstream: `rondo.auth.TokenExchange.upstream_auth(...)` sends each relayed request with
    its caller's exchanged token (RFC 8693). Other keywords go to `rondo.Server` (`state=`, `auth=`...);
    a proxy needs a state policy, so `state=None` is refused. The upstream is connected when the
    server's lifespan starts (`run_http`, `rondo run`, `async with server.started()`), and a
    failure to connect fails the start. `bridge` ("hold", "replay", `Hold(...)`, `Replay(...)`)
    turns a 2025-11-25 upstream's mid-call questions into input rounds (gateway/bridge/); without
    it they are refused.
    """
    if server_options.get("state", ...) is None:
        raise ValueError("a proxy seals the upstream's request state: state=None is refused")
    server_options.setdefault("warn_undocumented", False)
    label: str | None = None
    if transport not in (None, "http", "sse"):
        raise ValueError(f"transport must be 'http' or 'sse', got {transport!r}")
    sse = transport == "sse"
    if transport is not None and not isinstance(upstream, str):
        raise ValueError("transport= goes with an upstream given as a URL")
    if isinstance(upstream, ServerEntry):
        sse = upstream.kind == "sse"
        headers = {**upstream.headers, **(headers or {})}
        env = {**upstream.env, **(env or {})}
        cwd = cwd if cwd is not None else upstream.cwd
        timeout = timeout if timeout is not None else upstream.timeout
        if bridge is None and upstream.bridge not in (None, "none"):
            bridge = upstream.bridge  # the entry's own "bridge" key
        label, upstream = upstream.name, upstream.target
    link = Upstream(upstream, headers=headers, timeout=30.0 if timeout is None else timeout,
                    protocol=upstream_protocol, auth=upstream_auth, env=env, cwd=cwd,
                    label=label)
    link.restart = restart if restart is not None else Restart()
    for option, value in (("max_rounds", max_rounds), ("max_response", max_response)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{option} must be a positive integer")
    link.max_rounds, link.max_response = max_rounds, max_response
    link.sse = sse
    if bridge is not None:
        from .bridge.relay import Bridge, bridge_mode

        mode = bridge_mode(bridge)
        link.bridge = Bridge(link, mode) if mode is not None else None
    server = Server(name, **server_options)
    if not must_connect:  # it may serve before its upstream answers: offer what it can bring
        server.advertise("tools", "prompts", "resources")
    server.extension(TaskRelay(link))

    async def relist(what: str) -> None:
        if link.client is None:
            return  # not connected: the registry as it stands (calls answer "unavailable")
        try:
            await _register_list(server, link, what, replace=True)
        except (ClientError, McpError, OSError) as exc:
            # Spec §6: a cache MAY serve stale on refetch errors; the next list tries again.
            log.warning("upstream %s: cannot list its %s again: %s", link.identity, what,
                        _clip(str(exc)))

    lists = ListRefresh(link.fresh, relist)
    if upstream_auth is not None:  # each caller's own credentials: private lists per principal
        from .percaller import PerCaller, adopter

        lists.per_caller = PerCaller(link, adopter(server, link))
    server.extension(lists)
    server.extension(ResourceWatch(link))
    link.server = server

    @server.lifespan
    async def connect(_: Server) -> AsyncIterator[None]:
        from .supervise import supervised

        try:
            if link.bridge is not None:
                await link.bridge.start()  # hold in a fleet: subscribed before serving
            async with supervised(server, link, name, _serving, must_connect=must_connect):
                yield
        finally:
            if link.bridge is not None:
                await link.bridge.close()

    return server


@contextlib.asynccontextmanager
async def _serving(server: Server, link: Upstream, client: Client) -> AsyncIterator[None]:
    """Serve through `client`, connected: list what the upstream serves, relay its completion
    and follow its list changes until the block ends (gateway/supervise.py runs it, again
    after each restart). Raises RuntimeError when the upstream's lists cannot be read."""
    try:
        link.client = client
        offers = client.server_capabilities or {}
        if client.era == "legacy" and "logging" in offers:
            # A 2025-11-25 upstream's level is per session: take everything, and let each
            # downstream request's ctx.log keep what its client asked for.
            with contextlib.suppress(ClientError, McpError, OSError):
                await client.request("logging/setLevel", {"level": "debug"})
        try:
            await _register(server, link)
        except (ClientError, McpError, OSError) as exc:
            raise RuntimeError(f"proxy {server.name!r}: cannot list its upstream's components: "
                               f"{exc}") from None
        if "completions" in (client.server_capabilities or {}):

            async def complete(ref: Any, argument: Any, context: Any) -> dict[str, Any]:
                return await _complete(link, ref, argument, context)

            server.completion(complete)
        link.changes = asyncio.Queue()
        follower = asyncio.create_task(_follow(server, link))
        try:
            yield
        finally:
            follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await follower
    finally:
        link.client = None
        link.changes = None
        link.watched.clear()  # a new connection is subscribed again as clients subscribe
        server.completion_handler = None


async def _register(server: Server, link: Upstream) -> None:
    """Page through every list the upstream advertises and register a relay for each entry."""
    client = link.client
    assert client is not None
    if not client.server_capabilities and client.era == "modern":
        await client.discover()  # a pinned modern version skips the probe that learns them
    for what in ("tools", "prompts", "resources"):  # after a restart: swapped for the new
        await _register_list(server, link, what, replace=True)


async def _register_list(server: Server, link: Upstream, what: str, *,
                         replace: bool = False) -> bool:
    """List the upstream's `what` and register a relay for each entry. With `replace`, what
    this link registered there before is dropped first, in the same step as the new entries
    are added (no await between), so no request sees the list empty."""
    client = link.client
    assert client is not None
    if what not in (client.server_capabilities or {}):
        return False
    for method in UPSTREAM[what]:  # pages of an earlier listing do not speak for this one
        client.cache.invalidate(method)
    adds: list[Any] = []
    if what == "tools":
        adds = [(_add_tool, tool) for tool in await client.list_tools(refresh=True)]
    elif what == "prompts":
        adds = [(_add_prompt, prompt) for prompt in await client.list_prompts(refresh=True)]
    else:
        resources = await client.list_resources(refresh=True)
        templates = await client.list_resource_templates(refresh=True)
        adds = [(_add_resource, (r.uri, _drop_none({
            "name": r.name, "title": r.title, "description": r.description,
            "mime_type": r.mime_type, "size": r.size, "annotations": r.annotations,
            "icons": r.icons, "meta": r.meta}))) for r in resources]
        adds += [(_add_resource, (t.uri_template, _drop_none({
            "name": t.name, "title": t.title, "description": t.description,
            "mime_type": t.mime_type, "annotations": t.annotations, "icons": t.icons,
            "meta": t.meta}))) for t in templates]
    link.fresh.heard(what, [hint for (method, _), hint in client.cache.hints.items()
                            if method in UPSTREAM[what]], modern=client.era == "modern")
    digest = repr([entry for _, entry in adds])
    if replace and link.listed.get(what) == digest:
        return False  # listed again, nothing changed: no swap (the caller decides on telling)
    link.listed[what] = digest
    if replace:
        drop = {"tools": server.remove_tool, "prompts": server.remove_prompt,
                "resources": server.remove_resource}[what]
        for name in list(link.registered[what]):
            with contextlib.suppress(KeyError):
                drop(name)
        link.registered[what].clear()
    for add, entry in adds:
        if add is _add_resource:
            _add_resource(server, link, *entry)
        else:
            add(server, link, entry)
    return True


_TELL = {"tools": Server.notify_tools_changed, "prompts": Server.notify_prompts_changed,
         "resources": Server.notify_resources_changed}


async def _refresh(server: Server, link: Upstream, what: str) -> None:
    """The upstream's `what` list changed: list it again and swap the relays. The upstream's
    word is passed on even when the entries the proxy keeps look the same (something it does
    not keep may have changed); only a refresh the proxy makes itself on a lapsed cache hint
    stays silent when nothing changed."""
    if not await _register_list(server, link, what, replace=True):
        _TELL[what](server)


async def _follow(server: Server, link: Upstream) -> None:
    """Relay the upstream's list changes into the proxy's registry (whose listeners then tell
    the proxy's clients), for as long as the proxy runs."""
    client, changes = link.client, link.changes
    assert client is not None and changes is not None
    offers = client.server_capabilities or {}
    wanted = [what for what in ("tools", "prompts", "resources")
              if (offers.get(what) or {}).get("listChanged")]

    async def redo(what: str) -> None:
        try:
            await _refresh(server, link, what)
        except (ClientError, McpError, OSError) as exc:
            log.warning("upstream %s: cannot list its %s again: %s", link.identity, what, exc)

    if client.era == "modern":  # reopened whenever the URIs watched change (updates.py)
        await follow_listen(link, client, wanted, redo)
        return
    while True:
        await redo(await changes.get())


def _tool_body(result: CallToolResult) -> dict[str, Any]:
    """The upstream's `CallToolResult` as the proxy's result object: what `ToolResult.to_dict`
    makes of it, without the object (every content item a content block, else a TypeError)."""
    body: dict[str, Any] = {"content": [as_block(item) for item in result.content]}
    if result.structured_content is not None:
        body["structuredContent"] = result.structured_content  # decoded JSON: builtins already
    if result.is_error:
        body["isError"] = True
    if result.meta is not None:
        body["_meta"] = result.meta
    return body


def _raw_tool_body(result: dict[str, Any]) -> dict[str, Any]:
    """`_tool_body` of the upstream's `CallToolResult` as sent (`Client.resume(raw=True)`):
    the shape `convert` checks (`content` an array of objects, `isError` a boolean, `_meta` an
    object; else ProtocolError), then every content item a content block (else a TypeError,
    as `as_block` raises), and only the four members `_tool_body` keeps."""
    content = result.get("content", [])
    is_error = result.get("isError", False)
    meta = result.get("_meta")
    if (type(content) is not list or type(is_error) is not bool
            or (meta is not None and type(meta) is not dict)):
        raise ProtocolError("malformed tools/call result: content, isError or _meta")
    for item in content:  # every item an object first, as `convert` checks before any block
        if type(item) is not dict:
            raise ProtocolError("malformed tools/call result: a content item not an object")
    for item in content:
        if not is_content_block(item):
            raise TypeError(f"not a content block: {item!r:.80}")
    body: dict[str, Any] = {"content": content}
    structured = result.get("structuredContent")
    if structured is not None:
        body["structuredContent"] = structured
    if is_error:
        body["isError"] = True
    if meta is not None:
        body["_meta"] = meta
    return body


def _add_tool(server: Server, link: Upstream, tool: Any) -> None:
    upstream_name = tool.name

    def relay(ctx: Context, arguments: dict[str, Any]) -> Coroutine[Any, Any, Any]:
        # The relay lane's call (core/relay.py): the arguments as the client sent them, the
        # result as the proxy's result object (`Upstream.relay(tool_body=True)`). A plain def
        # handing over the coroutine: no frame of its own on every wake.
        return link.relay(ctx, "tools/call", {"name": upstream_name, "arguments": arguments},
                          tool_body=True)

    async def call(ctx: Context, **arguments: Any) -> Any:
        # The general path's (middleware, a legacy session, a mount's guard, tasks).
        result = await link.relay(ctx, "tools/call", {"name": upstream_name,
                                                      "arguments": arguments})
        if not isinstance(result, CallToolResult):
            return result
        if result.structured_content is None:
            return ToolResult(result.content, is_error=result.is_error, meta=result.meta)
        return ToolResult(result.content, structured=result.structured_content,
                          is_error=result.is_error, meta=result.meta)

    call.__annotations__ = _ANY_HINTS
    try:
        server.tool(name=tool.name, title=tool.title, description=tool.description or "",
                    input_schema=tool.input_schema, output_schema=tool.output_schema,
                    annotations=tool.annotations, icons=tool.icons, meta=tool.meta,
                    tags=upstream_tags(tool.meta))(call)
    except ValueError as exc:
        log.warning("upstream %s: tool %r not served: %s", link.identity, tool.name, exc)
        return
    server.tools[tool.name].relay = relay
    link.registered["tools"].add(tool.name)


def _add_prompt(server: Server, link: Upstream, prompt: Any) -> None:
    upstream_name = prompt.name

    async def get(ctx: Context, **arguments: Any) -> Any:
        params: dict[str, Any] = {"name": upstream_name, "arguments": arguments}
        result = await link.relay(ctx, "prompts/get", params)
        if not isinstance(result, GetPromptResult):
            return result
        return [{"role": m.role, "content": m.content} for m in result.messages]

    get.__annotations__ = _ANY_HINTS
    try:
        server.prompt(name=prompt.name, title=prompt.title, description=prompt.description,
                      icons=prompt.icons, meta=prompt.meta, tags=upstream_tags(prompt.meta))(get)
    except ValueError as exc:
        log.warning("upstream %s: prompt %r not served: %s", link.identity, prompt.name, exc)
        return
    made = server.prompts[prompt.name]
    arguments = [_drop_none({"name": a.name, "title": a.title, "description": a.description,
                             "required": a.required}) for a in prompt.arguments]
    server.prompts[prompt.name] = Prompt(made.name, made.fn, made.signature,
                                         {**made.wire, "arguments": arguments}, made.middleware,
                                         made.tags)
    link.registered["prompts"].add(prompt.name)


def _add_resource(server: Server, link: Upstream, uri: str, wire: dict[str, Any]) -> None:
    async def read(ctx: Context, **variables: Any) -> Any:
        params = {"uri": ctx.request_params["uri"]}
        result = await link.relay(ctx, "resources/read", params)
        if not isinstance(result, ReadResourceResult):
            return result
        return list(result.contents)

    read.__annotations__ = {"ctx": Context, "variables": Any, "return": Any}
    try:
        server.resource(uri, **wire, tags=upstream_tags(wire.get("meta")))(read)
    except ValueError as exc:
        log.warning("upstream %s: resource %r not served: %s", link.identity, uri, exc)
        return
    link.registered["resources"].add(uri)
