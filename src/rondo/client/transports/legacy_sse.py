"""The 2024-11-05 HTTP+SSE client transport, for old servers: one long GET stream carries
everything the server sends; each client message is a POST to the endpoint the stream names.

    GET /sse                 -> event: endpoint / data: /messages/?session_id=...
    POST <endpoint> {json}   -> 202 Accepted; the answer comes as `event: message` on the stream

The endpoint must be on the stream's own origin (a server cannot send our messages elsewhere).
Every event is bounded (`max_event`); a malformed one, or the stream ending, fails every
pending request, and the transport is spent (`wait_ended()` returns, as for stdio). The
handshake is the 2025-era `initialize` (the client falls back to it: an old server answers
the modern probe with an error).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
import msgspec

from rondo.client.errors import HttpError, ProtocolError, TransportError
from rondo.client.limits import (
    CLOSE_GRACE,
    DEFAULT_MAX_EVENT,
    DEFAULT_MAX_SERVER_REQUESTS,
    ServerRequestGate,
    positive,
    take_incoming,
)
from rondo.client.transports import Incoming, Json, answered, is_response
from rondo.client.transports.sse import SseParser, bounded_lines, events

from ...wire.errors import DECODE_ERRORS

_MAX_ERROR_BODY = 4096
ClientErrorTypes = (ProtocolError, HttpError, TransportError)


class SseTransport:
    name = "sse"
    carries_headers = False

    def __init__(self, url: str, *, headers: Mapping[str, str] | None = None,
                 connect_timeout: float = 10.0, max_event: int = DEFAULT_MAX_EVENT,
                 max_server_requests: int = DEFAULT_MAX_SERVER_REQUESTS,
                 auth: httpx.Auth | None = None) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError("an SSE server is an http(s) URL")
        self.url = url
        self.headers = dict(headers or {})
        self.connect_timeout = connect_timeout
        self.max_event = positive("max_event", max_event)
        self.auth = auth
        self.legacy_version: str | None = None
        self.endpoint: str | None = None
        self._client: httpx.AsyncClient | None = None
        self._reader: asyncio.Task[None] | None = None
        self._pending: dict[Any, asyncio.Future[Json]] = {}
        self._failure: Exception | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._on_incoming: Incoming | None = None
        self._gate = ServerRequestGate(max_server_requests)

    async def start(self, on_incoming: Incoming) -> None:
        self._on_incoming = on_incoming
        self._client = httpx.AsyncClient(
            headers=self.headers, auth=self.auth,
            timeout=httpx.Timeout(self.connect_timeout, read=None))
        ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._reader = asyncio.create_task(self._read(ready))
        try:
            self.endpoint = await asyncio.wait_for(asyncio.shield(ready), self.connect_timeout)
        except TimeoutError:
            await self.close()
            raise TransportError(f"no endpoint event within {self.connect_timeout:g} s") from None
        except BaseException:
            await self.close()
            raise

    async def wait_ended(self) -> None:
        """Return once the server's stream has ended (the transport is spent)."""
        reader = self._reader
        if reader is not None:
            await asyncio.wait([reader])

    async def request(self, message: Json, headers: Mapping[str, str] | None = None) -> Json:
        self._check_open()
        return await answered(self._pending, message, self._post)

    async def notify(self, message: Json) -> None:
        self._check_open()
        await self._post(message)

    async def after_handshake(self) -> None:
        return None

    async def close(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=CLOSE_GRACE)
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()
        self._fail_all(TransportError("transport closed"))

    # -- internals -----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._client is None or self.endpoint is None:
            raise TransportError("SSE transport is not running")

    async def _post(self, message: Json) -> None:
        client, endpoint = self._client, self.endpoint
        if client is None or endpoint is None:
            raise TransportError("SSE transport is not running")
        try:
            response = await client.post(endpoint, content=msgspec.json.encode(message),
                                         headers={"Content-Type": "application/json"})
        except httpx.HTTPError as exc:
            raise TransportError(f"POST to the server failed: {type(exc).__name__}") from None
        if response.status_code >= 300:
            raise HttpError(response.status_code, response.text[:_MAX_ERROR_BODY])

    def _fail_all(self, exc: Exception) -> None:
        if self._failure is None:
            self._failure = exc
        for future in self._pending.values():
            if not future.done():
                future.set_exception(exc)

    async def _read(self, ready: asyncio.Future[str]) -> None:
        client = self._client
        assert client is not None
        failure: Exception = TransportError("the server closed its SSE stream")
        try:
            async with client.stream("GET", self.url,
                                     headers={"Accept": "text/event-stream"}) as response:
                if response.status_code >= 300:
                    raise HttpError(response.status_code, "the SSE stream was refused")
                ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if ctype != "text/event-stream":
                    raise ProtocolError(f"the SSE endpoint answered {ctype or 'no type'}")
                lines = bounded_lines(response.aiter_bytes(), self.max_event)
                async for event in events(lines, SseParser(max_event=self.max_event)):
                    if event.event == "endpoint":
                        if not ready.done():
                            ready.set_result(self._endpoint(event.data.strip()))
                        continue
                    if event.event == "message" and event.data.strip():
                        await self._route(event.data)
        except asyncio.CancelledError:
            raise
        except ClientErrorTypes as exc:
            failure = exc
        except httpx.HTTPError as exc:
            failure = TransportError(f"the SSE stream failed: {type(exc).__name__}")
        if not ready.done():
            ready.set_exception(failure)
        self._fail_all(failure)

    def _endpoint(self, data: str) -> str:
        endpoint = urljoin(self.url, data)
        mine, theirs = urlsplit(self.url), urlsplit(endpoint)
        if (mine.scheme, mine.netloc) != (theirs.scheme, theirs.netloc):
            raise ProtocolError("the server named a message endpoint on another origin")
        return endpoint

    async def _route(self, data: str) -> None:
        try:
            message = msgspec.json.decode(data)
        except DECODE_ERRORS:
            raise ProtocolError("server sent malformed JSON in an SSE event") from None
        if not isinstance(message, dict):
            raise ProtocolError("server sent an SSE event that is not a JSON-RPC message")
        if is_response(message):
            future = self._pending.get(message.get("id"))
            if future is not None and not future.done():
                future.set_result(message)
            return
        if "method" not in message:
            raise ProtocolError("server sent a message that is neither a response nor a request")
        assert self._on_incoming is not None
        await take_incoming(self._gate, message, self._on_incoming, self._post, self._tasks)

