"""The bridge's upstream sessions. A 2025-11-25 server learns what its client can answer only
at `initialize`, and keeps per-session state (the roots it fetched, log levels, subscriptions),
so each bridged call over HTTP (Streamable HTTP, or the 2024-11-05 SSE transport, where the
session is a `GET` stream of its own) gets a session of its own, initialized with exactly the input
capabilities (`elicitation`, `sampling`, `roots`) its downstream client declared, and closed
when the call ends: nothing one client told the upstream reaches another's call. A stdio
upstream's bridged calls each take a process of a bounded pool (bridge/pool.py), one call per
process at a time, initialized with the call's client's capabilities.

Each session's handlers do not answer: they hand the upstream's question to the flow whose
call it belongs to (`flow.CURRENT`, the context the question was read in over Streamable HTTP;
otherwise the one flow open on that session: a per-call SSE session has exactly one).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from typing import TYPE_CHECKING, Any

import msgspec

from ...client import Client, ClientError
from ...client.handlers import Handlers
from ...client.loop import Unanswerable
from ...wire.errors import McpError
from .flow import CURRENT, Flow, RoundLog

if TYPE_CHECKING:
    from ..upstream import Upstream
    from .pool import Pool

log = logging.getLogger("rondo.gateway")
INPUT_KINDS = ("elicitation", "sampling", "roots")
CLOSING = "upstream unavailable: the proxy is closing"


def input_capabilities(declared: Any) -> dict[str, Any]:
    """The part of a client's capabilities a legacy upstream may ask by."""
    if not isinstance(declared, dict):
        return {}
    return {kind: declared[kind] for kind in INPUT_KINDS if isinstance(declared.get(kind), dict)}


class _Relayed(Handlers):
    """Declares the caller's capabilities; each question goes to its flow."""

    def __init__(self, capabilities: dict[str, Any], sessions: Sessions, key: str) -> None:
        super().__init__(extra_capabilities=capabilities)
        self._sessions = sessions
        self._key = key

    async def answer(self, request: Any, *, key: str = "", strict: bool = True) -> dict[str, Any]:
        flow = CURRENT.get()
        if flow is None:
            flows = self._sessions.flows.get(self._key, set())
            if len(flows) != 1:
                raise Unanswerable("the proxy cannot tell which relayed call this request "
                                   "belongs to")
            flow = next(iter(flows))
        params = request.get("params")
        return await flow.ask(str(request.get("method")), params if isinstance(params, dict) else {})


class Sessions:
    """The bridge's upstream clients: one per call (HTTP), or a pooled process per call
    (stdio)."""

    def __init__(self, link: Upstream, *, processes: int | None = None) -> None:
        self.link = link
        self.processes = processes  # a stdio upstream's pool size (None: the default)
        self.clients: dict[str, Client] = {}
        self.flows: dict[str, set[Flow]] = {}
        self.pool: Pool | None = None  # a stdio upstream's processes, made on first use
        self._calls = itertools.count(1)
        self._closing: set[asyncio.Future[None]] = set()
        self._shared: Any = None  # httpx.AsyncClient, made on first use
        self._shut = False  # close() began

    async def client_for(self, declared: Any, *, logs: bool = False) -> tuple[str, Client]:
        """A connected session for one call of a client that declared `declared` (`logs`: the
        client asked for log messages, so the session asks the upstream for all of them and
        the proxy keeps what the client's level wants); hand it back with `release`."""
        if self._shut:  # as the stdio pool (bridge/pool.py): nothing opened after close()
            raise McpError(-32603, CLOSING)
        caps = input_capabilities(declared)
        if self.link.kind == "url":
            key = f"call-{next(self._calls)}"
            own = self._make(caps, key, logs=logs)
            await self._connect(own)
            if self._shut:  # closed while it connected: no session outlives the proxy
                with contextlib.suppress(Exception):
                    await own.close()
                raise McpError(-32603, CLOSING)
            self.clients[key] = own
            return key, own
        if self.pool is None:  # a stdio upstream: processes of its own (bridge/pool.py)
            from .pool import Pool

            self.pool = Pool(self.link, self._make, self._connect, size=self.processes)
        return await self.pool.acquire(msgspec.json.encode(caps, order="sorted").decode(), caps)

    async def _connect(self, client: Client) -> None:
        try:
            async with asyncio.timeout(self.link.timeout):  # the session has no request bound
                await client.connect()
        except TimeoutError:
            with contextlib.suppress(Exception):
                await client.close()
            raise McpError(-32603, f"upstream did not answer within {self.link.timeout:g} s"
                           ) from None
        except (ClientError, OSError) as exc:
            log.warning("upstream %s: bridge session: %s: %s", self.link.identity,
                        type(exc).__name__, exc)
            with contextlib.suppress(Exception):
                await client.close()
            raise McpError(-32603, "upstream unavailable") from None

    def release(self, key: str, client: Client, *, cancelled: bool = False) -> None:
        """The call on `client` ended: a per-call session is closed (in the background), a
        stdio process goes back to its pool (after a ping round trip when the call was
        cancelled, bridge/pool.py)."""
        if self.pool is not None and key.startswith("proc-"):
            self.flows.pop(key, None)
            self.pool.release(key, settle=cancelled)
        elif key.startswith("call-"):
            self.flows.pop(key, None)
            self.drop(key, client)

    def _make(self, caps: dict[str, Any], key: str, *, logs: bool = True) -> Client:
        from ..upstream import pass_on_log

        link = self.link
        base = link.client
        version = base.protocol_version if base is not None else "2025-11-25"

        def heard(message: dict[str, Any]) -> None:
            if message.get("method") == "notifications/message":
                # Over Streamable HTTP it is read in its call's context; elsewhere (a stdio pool
                # process, an SSE session) it goes to the one flow open on this session.
                flows = self.flows.get(key, ())
                pass_on_log(message.get("params"),
                            RoundLog(next(iter(flows))) if len(flows) == 1 else None)

        # No per-request timeout: the bridge bounds each wait itself (the upstream's next step
        # by the proxy's timeout, the client's answer by the hold's).
        target: Any = link.target
        if isinstance(target, str) and link.sse:  # 2024-11-05: a stream of its own per call
            from ...client.transports.legacy_sse import SseTransport

            target = SseTransport(target, headers=link.headers or None, auth=link.auth,
                                  max_event=link.max_response)
        elif isinstance(target, str):  # every call's session on one shared HTTP client and pool
            from ...client.transports.http import HttpTransport

            target = HttpTransport(target, headers=link.headers or None, auth=link.auth,
                                   http_client=self._http())
        client = Client(target, protocol=version, name="rondo-proxy",
                        headers=link.headers or None, auth=link.auth, timeout=None,
                        max_timeout=None,
                        probe_timeout=link.timeout, capabilities=caps, on_notification=heard,
                        log_level="debug" if logs else None,
                        # a stdio upstream's own env and cwd (an mcp.json entry's), stderr logged
                        env=link.env if link.kind == "command" else None, cwd=link.cwd,
                        stderr=link.stderr_line if link.kind == "command" else None)
        client.handlers = _Relayed(caps, self, key)
        return client

    def _http(self) -> Any:
        """The httpx client the per-call sessions share: made once (making one costs tens of
        milliseconds), pooling connections to the upstream's one origin."""
        if self._shared is None:
            import httpx

            from ...client.transports.http11 import Http11Pool

            self._shared = httpx.AsyncClient(
                timeout=httpx.Timeout(self.link.timeout, read=None, write=30.0, pool=None),
                follow_redirects=False, auth=self.link.auth, transport=Http11Pool())
        return self._shared

    def drop(self, key: str, client: Client) -> None:
        """A session that failed is let go; the next call opens a new one."""
        if self.pool is not None and key.startswith("proc-"):
            self.pool.release(key, broken=True)
        elif self.clients.get(key) is client:
            del self.clients[key]
            task = asyncio.ensure_future(client.close())
            self._closing.add(task)
            task.add_done_callback(self._closed)

    def _closed(self, task: asyncio.Future[None]) -> None:
        self._closing.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.debug("upstream %s: closing a bridge session: %s", self.link.identity,
                      task.exception())

    def open(self) -> None:
        """The proxy starts (again, after a close: its lifespan runs once per start): calls
        open sessions again, a stdio upstream's on a new pool (a closed one lends nothing)."""
        self._shut = False
        if self.pool is not None and self.pool._closed:
            self.pool = None

    async def close(self) -> None:
        self._shut = True
        if self.pool is not None:
            await self.pool.close()
        if self._closing:
            await asyncio.wait(set(self._closing), timeout=5)
        clients, self.clients = list(self.clients.values()), {}
        for client in clients:
            with contextlib.suppress(Exception):
                await client.close()
        shared, self._shared = self._shared, None
        if shared is not None:
            with contextlib.suppress(Exception):
                await shared.aclose()
