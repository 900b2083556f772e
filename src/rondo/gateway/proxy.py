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
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ..client import Client, ClientError
from ..client.mcpjson import ServerEntry
from ..server.server import Server
from ..wire.errors import McpError
from .listcache import ListRefresh
from .proxy_components import _follow, _register, _register_list
from .supervise import Restart
from .tasks import TaskRelay
from .updates import ResourceWatch
from .upstream import MAX_RESPONSE as MAX_RESPONSE  # kept importable from here since the move
from .upstream import MAX_ROUNDS as MAX_ROUNDS
from .upstream import UNAVAILABLE as UNAVAILABLE
from .upstream import Upstream as Upstream
from .upstream import _complete, log
from .upstream import pass_on_log as pass_on_log
from .upstream_errors import clip as _clip

PROXY_ENV = "RONDO_PROXY"  # `rondo proxy`: the JSON configuration gateway/served.py reads


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
