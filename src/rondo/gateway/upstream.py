"""A proxy's link to one upstream (`Upstream`): the client it speaks through, the identity its
sealed state names, and the relay of one round of a call; the upstream's log messages, progress
and completion passed on, and a tool's result shaped as the proxy's own (`proxy.py` builds the
server around it, `proxy_components.py` registers its relays).
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..auth.principal import CALLER, Principal
from ..client import Client, ClientError, PendingCall, RequestTimeout
from ..client.errors import ProtocolError
from ..client.loop import NoHandler
from ..client.types import CallToolResult
from ..mrtr.result import InputRequired
from ..server.content import as_block, is_content_block
from ..server.context import Context
from ..wire.errors import MISSING_CAPABILITY, McpError
from ..wire.meta import CLIENT_CAPABILITIES, LOG_LEVEL, LOG_LEVEL_RANK, PROGRESS_TOKEN
from .listcache import Freshness
from .supervise import Restart
from .tasks import TaskPassThrough, upstream_capabilities
from .updates import MAX_WATCHED
from .upstream_errors import clip as _clip
from .upstream_errors import passed_on

if TYPE_CHECKING:
    from ..server.server import Server
    from .bridge.relay import Bridge

log = logging.getLogger("rondo.gateway")

UNAVAILABLE = -32603
MAX_ROUNDS = 16  # input rounds one relayed request may take (a downstream rondo.Client: 10)
MAX_RESPONSE = 16 * 1024 * 1024  # one upstream HTTP answer or SSE event, in bytes
_INPUT_KINDS = ("elicitation", "sampling", "roots")
_LISTS = {"notifications/tools/list_changed": "tools",
          "notifications/prompts/list_changed": "prompts",
          "notifications/resources/list_changed": "resources"}
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

