"""Streamable HTTP client transport (httpx): one POST per message, JSON or SSE answers.

On the 2026-07-28 wire every POST carries `MCP-Protocol-Version` (copied from the request's
`_meta`), `Mcp-Method` and, for tools/call, prompts/get and resources/read, `Mcp-Name`; the
caller adds `Mcp-Param-*`. No session, no GET stream. On the 2025-11-25 wire the transport
keeps the `Mcp-Session-Id` from `initialize`, answers server requests arriving on a response
stream by POSTing the reply, and resumes a dropped stream with `Last-Event-ID` after the
server's `retry` delay.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
import msgspec

from rondo.client.errors import HttpError, ProtocolError, TransportError
from rondo.client.limits import (
    CLOSE_GRACE,
    DEFAULT_MAX_EVENT,
    DEFAULT_MAX_RESPONSE,
    DEFAULT_MAX_SERVER_REQUESTS,
    ServerRequestGate,
    answer_incoming,
    positive,
)
from rondo.client.transports import Incoming, Json, is_response, is_server_request
from rondo.client.transports.http11 import Http11Pool, LeanResponse
from rondo.client.transports.sse import SseParser, bounded_lines, events
from rondo.wire.era import sent_legacy
from rondo.wire.headers import encode_value
from rondo.wire.inflate import ACCEPT_ENCODING, InflateError, TooLarge, body_of
from rondo.wire.meta import NAME_FIELDS, PROTOCOL_VERSION

from ...wire.errors import DECODE_ERRORS

Answer = httpx.Response | LeanResponse  # Http11Pool.post's answer, or httpx's

_ACCEPT = "application/json, text/event-stream"
# What notify(), error bodies and DELETE may make us read (only the start of it is shown).
_MAX_ERROR_BODY = 64 * 1024
_MAX_REDIRECTS = 5
_get: Callable[..., Any] = dict.get  # a LeanHeaders' own get, without its lower-casing of the key


def shown(url: str) -> str:
    """`url` as an error message may name it: scheme, host, port and path, without the userinfo
    or query that may hold a credential (`?api_key=`; errors end up in logs, a gateway's too)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{parts.scheme}://{host}{f':{port}' if port else ''}{parts.path}"


class HttpTransport:
    name = "http"
    carries_headers = True  # Mcp-Name, Mcp-Param-* (the client computes the latter)

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float | None = None,
        max_reconnects: int = 3,
        http_client: httpx.AsyncClient | None = None,
        max_response: int = DEFAULT_MAX_RESPONSE,
        max_event: int = DEFAULT_MAX_EVENT,
        max_server_requests: int = DEFAULT_MAX_SERVER_REQUESTS,
        auth: httpx.Auth | None = None,
        http_transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.url = url
        # Under the client this transport makes (None: httpx's own; `http11.Http11Pool` for a
        # link that sends many requests to one origin, as a proxy's upstream link does).
        self._http_transport = http_transport
        # With that pool and no auth flow, a POST goes to the pool itself (`Http11Pool.post`),
        # without httpx's client models around it; anything else goes through httpx.
        self._lean = http_transport if isinstance(http_transport, Http11Pool) and auth is None else None
        self._head_lines: dict[Any, bytes] = {}  # a lean POST's header lines, by what varies in them
        self.headers = dict(headers or {})
        self.legacy_version: str | None = None
        self.session_id: str | None = None
        self.max_reconnects = max_reconnects
        self._timeout = httpx.Timeout(connect_timeout, read=read_timeout, write=30.0, pool=None)
        self._client = http_client
        self._own_client = http_client is None
        self._auth = auth  # auth hook: OAuth adds the bearer token and handles 401/403
        self._on_incoming: Incoming | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._waiting: dict[Any, asyncio.Future[Json]] = {}
        # Bounds on what the server can make us hold (docs/limits.md).
        self.max_response = positive("max_response", max_response)
        self.max_event = positive("max_event", max_event)
        self._gate = ServerRequestGate(max_server_requests)

    @property
    def headers(self) -> dict[str, str]:
        """Headers sent with every request (set a new dict to change them)."""
        return self._static

    @headers.setter
    def headers(self, value: Mapping[str, str]) -> None:
        self._static = dict(value)
        self._head_lines.clear()

    async def start(self, on_incoming: Incoming) -> None:
        self._on_incoming = on_incoming
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self._timeout, follow_redirects=False, auth=self._auth,
                                             transport=self._http_transport)

    def request(self, message: Json, headers: Mapping[str, str] | None = None
                ) -> Coroutine[Any, Any, Json]:
        """Send one request and await its answer (a plain function handing over the coroutine
        of the path it takes: one frame less on every wake of a relayed call)."""
        lean = self._lean
        if lean is not None and self.session_id is None and self.legacy_version is None:
            return self._lean_request(lean, message, headers)
        return self._request(message, headers)

    async def _lean_request(self, lean: Http11Pool, message: Json,
                            extra: Mapping[str, str] | None) -> Json:
        """A 2026-07-28 request on the lean pool: the header lines kept per (version, method,
        name), a short JSON answer decoded as the pool read it; anything else (a redirect, an
        SSE stream, an error status, a long or encoded body) as `_request` reads it."""
        rid = message["id"]
        params = message.get("params")
        meta = params.get("_meta") if type(params) is dict else None
        version = meta.get(PROTOCOL_VERSION) if type(meta) is dict else None
        if version is None or self._client is None or type(params) is not dict:
            return await self._request(message, extra)  # handshake-era, or not running
        method = message.get("method")
        field = NAME_FIELDS.get(method) if isinstance(method, str) else None
        name = params.get(field) if field is not None else None
        key = (version, method, name if isinstance(name, str) else None,
               tuple(extra.items()) if extra else None)
        try:
            lines = self._head_lines.get(key)
            if lines is None:
                lines = lean.header_lines(self._headers(message, extra))
                if len(self._head_lines) >= 256:  # bounded: names and param headers vary
                    self._head_lines.clear()
                self._head_lines[key] = lines
            response = await lean.post_lines(self.url, lines, msgspec.json.encode(message),
                                             connect_timeout=self._timeout.connect,
                                             whole=self.max_response)
            body = response.whole
            found = response.headers
            if (body is None or response.status_code >= 300 or _get(found, "content-encoding")
                    or not _get(found, "content-type", "").startswith("application/json")):
                return await self._finish(response, rid, message)
            stream = response.stream
            if not stream.closed:  # the pool gave a reusable one back as it read it whole
                stream.give_back()
            try:
                answer = msgspec.json.decode(body) if body.strip() else None
            except DECODE_ERRORS:
                raise ProtocolError(f"server answered with malformed JSON: {body[:120]!r}") from None
            if (type(answer) is dict and "result" in answer and answer.get("id") == rid
                    and "method" not in answer):
                return answer  # the usual answer: what `_checked` would let through at once
            return self._checked(answer, response, body, rid)
        except httpx.TimeoutException as exc:
            raise TransportError(f"HTTP timeout talking to {shown(self.url)}: {exc!r}") from exc
        except httpx.HTTPError as exc:
            raise TransportError(f"HTTP request to {shown(self.url)} failed: {exc}") from exc

    async def _finish(self, response: LeanResponse, rid: Any, message: Json) -> Json:
        """The rest of `_request` for a lean response already in hand."""
        async with contextlib.AsyncExitStack() as stack:
            stack.push_async_callback(response.aclose)
            if self._redirected(response):
                await response.aclose()
                return await self._request(message, None, redirects=_MAX_REDIRECTS - 1)
            return await self._read_answer(response, rid, stack)

    async def _request(self, message: Json, headers: Mapping[str, str] | None,
                       redirects: int = _MAX_REDIRECTS) -> Json:
        client = self._require_client()
        rid = message["id"]
        try:
            async with contextlib.AsyncExitStack() as stack:
                body, sent = msgspec.json.encode(message), self._headers(message, headers)
                response: Answer
                for _ in range(redirects + 1):
                    lean = self._lean
                    if lean is not None:
                        response = await lean.post(self.url, sent, body, connect_timeout=self._timeout.connect)
                        stack.push_async_callback(response.aclose)
                    else:
                        response = await stack.enter_async_context(
                            client.stream("POST", self.url, content=body, headers=sent)
                        )
                    if not self._redirected(response):
                        break
                    await response.aclose()
                else:
                    raise TransportError(f"more than {_MAX_REDIRECTS} redirects from {shown(self.url)}")
                if message.get("method") == "initialize" and "mcp-session-id" in response.headers:
                    self.session_id = response.headers["mcp-session-id"]
                return await self._answer_or_orphan(self._read_answer(response, rid, stack), rid)
        except asyncio.CancelledError:
            if sent_legacy(message):
                self._spawn(self._send_quietly({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                                "params": {"requestId": rid}}))
            raise
        except httpx.TimeoutException as exc:
            raise TransportError(f"HTTP timeout talking to {shown(self.url)}: {exc!r}") from exc
        except httpx.HTTPError as exc:
            raise TransportError(f"HTTP request to {shown(self.url)} failed: {exc}") from exc

    async def _answer_or_orphan(self, reading: Any, rid: Any) -> Json:
        """The answer read from this request's own response, or, on the 2025-11-25 wire, one
        that arrives on the standalone GET stream instead (servers may route it there)."""
        if self.legacy_version is None and self.session_id is None:
            direct: Json = await reading  # 2026-07-28: no GET stream, the answer comes on this one
            return direct
        future: asyncio.Future[Json] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = future
        reader = asyncio.ensure_future(reading)
        try:
            await asyncio.wait({reader, future}, return_when=asyncio.FIRST_COMPLETED)
            if future.done():
                return future.result()
            answer: Json = reader.result()
            return answer
        finally:
            self._waiting.pop(rid, None)
            if not reader.done():
                reader.cancel()
                with contextlib.suppress(BaseException):
                    await reader

    async def after_handshake(self) -> None:
        """2025-11-25: open the standalone GET stream, where servers send requests that belong
        to no POST (a 405 means the server has none; that is fine). Returns once the server
        has answered the GET, so later requests cannot overtake it."""
        opened = asyncio.Event()
        self._spawn(self._listen_standalone(opened))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(opened.wait(), 5.0)

    async def _listen_standalone(self, opened: asyncio.Event) -> None:
        headers = {"Accept": "text/event-stream", **self._session_headers()}
        try:
            async with self._require_client().stream("GET", self.url, headers=headers) as response:
                opened.set()
                ctype = response.headers.get("content-type", "")
                if response.status_code >= 400 or not ctype.startswith("text/event-stream"):
                    return
                async for event in events(self._lines(response), self._parser()):
                    if event.data.strip():
                        await self._on_event(event.data, rid=None)
        except (httpx.HTTPError, ProtocolError, TransportError):
            return
        finally:
            opened.set()

    async def notify(self, message: Json) -> None:
        client = self._require_client()
        try:
            for _ in range(_MAX_REDIRECTS + 1):
                async with client.stream("POST", self.url, content=msgspec.json.encode(message),
                                         headers=self._headers(message, None)) as response:
                    if self._redirected(response):
                        continue
                    if response.status_code >= 400:
                        body = await self._read_body(response, _MAX_ERROR_BODY, truncate=True)
                        raise HttpError(response.status_code, body.decode("utf-8", "replace"))
                    return
        except httpx.HTTPError as exc:
            raise TransportError(f"HTTP request to {shown(self.url)} failed: {exc}") from exc
        raise TransportError(f"more than {_MAX_REDIRECTS} redirects from {shown(self.url)}")

    async def close(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:  # bounded: a handler that ignores cancellation does not hold close() up
            await asyncio.wait(tasks, timeout=CLOSE_GRACE)
        client, self._client = self._client, None
        if client is None:
            return
        if self.session_id is not None:
            with contextlib.suppress(Exception):  # the answer's body is not read
                async with client.stream("DELETE", self.url, headers=self._session_headers(), timeout=2.0):
                    pass
        if self._own_client:
            await client.aclose()

    def _redirected(self, response: Answer) -> bool:
        """Follow a 307/308 within the server's origin (e.g. Starlette's `/mcp` -> `/mcp/`):
        the endpoint is taken to live there from now on. Anything else that redirects is an
        error naming where it pointed: off the origin, our headers (credentials included)
        would go to another server; a 301/302/303 would turn the POST into a GET."""
        if not response.is_redirect:
            return False
        location = response.headers.get("location", "")
        target = urljoin(self.url, location)
        here, there = urlsplit(self.url), urlsplit(target)
        if response.status_code not in (307, 308):
            raise TransportError(
                f"{shown(self.url)} answered HTTP {response.status_code} redirecting to {shown(target)}, which "
                "would turn the POST into a GET; point the client at the endpoint itself"
            )
        if (here.scheme, here.hostname, here.port) != (there.scheme, there.hostname, there.port):
            raise TransportError(
                f"{shown(self.url)} redirected to {shown(target)}, another origin; rondo.Client follows "
                "redirects only within the server's origin (headers and credentials would go to "
                "another server). If you trust it, use that URL directly."
            )
        self.url = target
        return True

    # -- headers -------------------------------------------------------------------------------

    def _session_headers(self) -> dict[str, str]:
        out = {"Accept-Encoding": ACCEPT_ENCODING, **self.headers}
        if self.legacy_version:
            out["MCP-Protocol-Version"] = self.legacy_version
        if self.session_id:
            out["Mcp-Session-Id"] = self.session_id
        return out

    def _headers(self, message: Mapping[str, Any], extra: Mapping[str, str] | None) -> dict[str, str]:
        out = {"Content-Type": "application/json", "Accept": _ACCEPT, "Accept-Encoding": ACCEPT_ENCODING}
        if sent_legacy(message):
            out.update(self._session_headers())
        else:
            out.update(self.headers)
            params = message["params"]
            out["MCP-Protocol-Version"] = str(params["_meta"][PROTOCOL_VERSION])
            method = message.get("method")
            if isinstance(method, str):
                out["Mcp-Method"] = method
                field = NAME_FIELDS.get(method)
                if field is not None and isinstance(params.get(field), str):
                    out["Mcp-Name"] = encode_value(params[field])
        out.update(extra or {})
        return out

    # -- answers -------------------------------------------------------------------------------

    async def _read_answer(self, response: Answer, rid: Any, stack: contextlib.AsyncExitStack) -> Json:
        ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype == "text/event-stream" and response.status_code < 300:
            return await self._read_stream(response, rid, stack)
        body = await self._read_body(response, self.max_response)
        try:
            message = msgspec.json.decode(body) if body.strip() else None
        except DECODE_ERRORS:
            if response.status_code >= 400:
                raise HttpError(response.status_code, body.decode("utf-8", "replace")) from None
            raise ProtocolError(f"server answered with malformed JSON: {body[:120]!r}") from None
        return self._checked(message, response, body, rid)

    @staticmethod
    def _checked(message: Any, response: Answer, body: bytes, rid: Any) -> Json:
        """A decoded answer body as this request's JSON-RPC response, or the error it is."""
        if isinstance(message, dict) and is_response(message):
            if message.get("id") == rid or (message.get("id") is None and "error" in message):
                return message
            raise ProtocolError(f"server answered id {message.get('id')!r} to request {rid!r}")
        if response.status_code >= 400:
            raise HttpError(response.status_code, body.decode("utf-8", "replace"))
        if message is None:
            raise ProtocolError(f"server answered HTTP {response.status_code} with no body to request {rid!r}")
        raise ProtocolError("server answered with JSON that is not a JSON-RPC response")

    async def _read_stream(self, response: Answer, rid: Any, stack: contextlib.AsyncExitStack) -> Json:
        parser = self._parser()
        reconnects = 0
        while True:
            async for event in events(self._lines(response), parser):
                if not event.data.strip():
                    continue  # a priming event: only its id matters
                answer = await self._on_event(event.data, rid)
                if answer is not None:
                    return answer
            resumable = self.session_id is not None or self.legacy_version is not None
            if not resumable or parser.last_event_id is None or reconnects >= self.max_reconnects:
                raise TransportError(f"server closed the response stream before answering request {rid!r}")
            reconnects += 1
            await asyncio.sleep((parser.retry_ms if parser.retry_ms is not None else 1000) / 1000.0)
            headers = {"Accept": "text/event-stream", **self._session_headers(),
                       "Last-Event-ID": parser.last_event_id}
            response = await stack.enter_async_context(
                self._require_client().stream("GET", self.url, headers=headers)
            )
            if response.status_code >= 400:
                body = await self._read_body(response, _MAX_ERROR_BODY, truncate=True)
                raise HttpError(response.status_code, body.decode("utf-8", "replace"))

    async def _on_event(self, data: str, rid: Any) -> Json | None:
        try:
            message = msgspec.json.decode(data)
        except DECODE_ERRORS:
            raise ProtocolError(f"server sent malformed JSON in an SSE event: {data[:120]!r}") from None
        if not isinstance(message, dict):
            raise ProtocolError("server sent an SSE event that is not a JSON-RPC message")
        if is_response(message):
            if rid is None:  # the standalone stream: hand the answer to whoever waits for it
                waiting = self._waiting.get(message.get("id"))
                if waiting is not None and not waiting.done():
                    waiting.set_result(message)
                return None
            if message.get("id") == rid:
                return message
            raise ProtocolError(f"server answered id {message.get('id')!r} on the stream of request {rid!r}")
        if "method" not in message:
            raise ProtocolError("server sent an SSE event that is neither a response nor a request")
        assert self._on_incoming is not None
        if is_server_request(message):
            if self._gate.admit():
                self._spawn(self._answer_server_request(message))
            else:  # answered at once, before reading on: the flood paces itself
                await self._send_quietly(self._gate.refusal(message))
        else:
            await self._on_incoming(message)
        return None

    async def _answer_server_request(self, message: Json) -> None:
        assert self._on_incoming is not None
        await answer_incoming(self._gate, message, True, self._on_incoming, self._send_quietly)

    async def _send_quietly(self, message: Json) -> None:
        with contextlib.suppress(Exception):
            await self.notify(message)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _require_client(self) -> httpx.AsyncClient:
        if self._client is None:
            raise TransportError("HTTP transport is not running")
        return self._client


    # -- bounded reads ---------------------------------------------------------------------------

    def _parser(self) -> SseParser:
        return SseParser(max_event=self.max_event)

    def _lines(self, response: Answer) -> AsyncIterator[str]:
        # No cap on the stream's total (it may live for hours): each decoded piece is bounded
        # and bounded_lines refuses any line over max_event as it grows.
        return bounded_lines(self._decoded(response, None), self.max_event)

    async def _decoded(self, response: Answer, limit: int | None) -> AsyncIterator[bytes]:
        """The body, Content-Encoding undone as it is read, never more than `limit` bytes."""
        try:
            async for piece in body_of(response, limit):
                yield piece
        except TooLarge:
            raise ProtocolError(f"server's answer exceeds {limit} bytes") from None
        except InflateError as exc:
            raise ProtocolError(f"server's answer refused: {exc}") from None

    async def _read_body(self, response: Answer, limit: int, *, truncate: bool = False) -> bytes:
        """The decoded body; beyond `limit` a ProtocolError, or with `truncate` its first
        `limit` bytes (an error body is shown, not needed whole)."""
        length = response.headers.get("content-length", "")
        if not truncate and length.isdigit() and int(length) > limit:
            raise ProtocolError(f"server's answer is {length} bytes (limit {limit})")
        whole = getattr(response.stream, "read_whole", None)  # Http11Pool's: one read
        if whole is not None and not truncate and not response.headers.get("content-encoding"):
            data: bytes | None = await whole(limit)
            if data is not None:
                return data
        body = bytearray()
        try:
            async for piece in body_of(response, None if truncate else limit):
                body += piece
                if len(body) >= limit and truncate:
                    return bytes(body[:limit])
        except TooLarge:
            raise ProtocolError(f"server's answer exceeds {limit} bytes") from None
        except InflateError as exc:
            if truncate:
                return bytes(body)
            raise ProtocolError(f"server's answer refused: {exc}") from None
        return bytes(body)
