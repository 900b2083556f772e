"""Connection-level limits for `serve()`: read timeouts, a connection cap, header bounds.

uvicorn alone never times out a request whose headers or body trickle in, accepts connections
until the process runs out of descriptors, and under httptools bounds neither header size nor
count. `HttpLimits` closes those gaps with a thin subclass of whichever uvicorn protocol runs
(httptools when installed, else h11), so the bounds hold whatever parser is picked (under
httptools the subclass also writes each fixed-length answer in one call, `coalesce.py`, and
runs a request that never waits without making it a task, `eager.py`):

- `header_timeout`: from the connection's first byte (or from accepting it, so a connection that
  never sends anything is closed too) to the end of the request headers; then 408 and close.
- `body_timeout`: from the end of the headers to the end of the body; then 408 and close.
- `keepalive_timeout`: an idle keep-alive connection is closed after this long (under httptools
  timed by the same per-connection timer, so an answer arms no timer of its own).
- `max_connections`: connections beyond it get 503 and are closed at once, so descriptors
  stay free for the ones being served. Default: the descriptor soft limit minus 64.
- `max_connections_per_peer`: one client address's share of them (default 120), so a client
  that reopens every connection it loses cannot hold them all; beyond it, 503 at once. Behind a
  proxy uvicorn trusts (`proxy_headers` with the peer in `forwarded_allow_ips`), connections
  count under the client the proxy names in `X-Forwarded-For`, request by request.
- `max_header_bytes` / `max_headers`: request line plus headers, in bytes and in count; 431.

`serve()` merges `uvicorn_options(limits)` into its uvicorn config. The protocol is named by an
import string and the limits travel in `RONDO_HTTP_LIMITS`, so uvicorn's worker processes
(`workers=N`, which re-import everything) enforce the same limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

ENV_LIMITS = "RONDO_HTTP_LIMITS"
_CLASS_FOR = {"httptools": "GuardedHttpTools", "h11": "GuardedH11"}
_PARSER_OF = {name: parser for parser, name in _CLASS_FOR.items()}

DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_BODY_TIMEOUT = 30.0
DEFAULT_KEEPALIVE_TIMEOUT = 5.0
DEFAULT_MAX_HEADER_BYTES = 64 * 1024
DEFAULT_MAX_HEADERS = 100
DEFAULT_MAX_CONNECTIONS_PER_PEER = 120
# Descriptors kept back from the connection cap: listening sockets, logs, Redis, files.
DESCRIPTOR_RESERVE = 64


@dataclass(frozen=True, slots=True)
class HttpLimits:
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    keepalive_timeout: float = DEFAULT_KEEPALIVE_TIMEOUT
    max_connections: int | None = None  # None: the descriptor soft limit minus 64
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    max_headers: int = DEFAULT_MAX_HEADERS
    # One client address's share of `max_connections` (counted per forwarded client when the
    # peer is a proxy uvicorn trusts: proxy_headers on, the peer in forwarded_allow_ips).
    max_connections_per_peer: int = DEFAULT_MAX_CONNECTIONS_PER_PEER

    def __post_init__(self) -> None:
        for name in ("header_timeout", "body_timeout", "keepalive_timeout"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"HttpLimits.{name} must be a positive number of seconds")
        for name in ("max_header_bytes", "max_headers", "max_connections_per_peer"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"HttpLimits.{name} must be a positive integer")
        cap = self.max_connections
        if cap is not None:
            if not isinstance(cap, int) or cap < 1:
                raise ValueError("HttpLimits.max_connections must be a positive integer")
            ceiling = descriptor_limit()
            if ceiling is not None and cap > ceiling - 16:
                raise ValueError(
                    f"HttpLimits.max_connections={cap} is not below this process's descriptor "
                    f"limit ({ceiling}): raise `ulimit -n` or lower the cap")

    def connection_cap(self) -> int:
        if self.max_connections is not None:
            return self.max_connections
        ceiling = descriptor_limit()
        return 1000 if ceiling is None else max(16, ceiling - DESCRIPTOR_RESERVE)


def descriptor_limit() -> int | None:
    try:
        import resource
    except ImportError:  # not POSIX
        return None
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def uvicorn_options(limits: HttpLimits | None = None, *, http: str | None = None) -> dict[str, Any]:
    """uvicorn config entries enforcing `limits`. `http` picks the parser ("httptools" or
    "h11"); by default httptools when installed."""
    limits = limits or HttpLimits()
    if http is None:
        try:
            import httptools  # noqa: F401

            http = "httptools"
        except ImportError:
            http = "h11"
    if http not in _CLASS_FOR:
        raise ValueError(f"unknown HTTP parser {http!r} (httptools or h11)")
    cap = limits.connection_cap()
    os.environ[ENV_LIMITS] = json.dumps(asdict(limits))  # read by the protocol, in any worker
    return {
        "http": f"{__name__}:{_CLASS_FOR[http]}",
        "timeout_keep_alive": limits.keepalive_timeout,
        # uvicorn's own check counts the connection asking, so one more than ours: ours
        # answers first, at accept time; this one also bounds requests in flight.
        "limit_concurrency": cap + 1,
        # h11's own bound (400) is a backstop behind ours (431).
        "h11_max_incomplete_event_size": 2 * limits.max_header_bytes,
    }


def limits_from_env() -> HttpLimits:
    raw = os.environ.get(ENV_LIMITS)
    return HttpLimits(**json.loads(raw)) if raw else HttpLimits()


_built: dict[tuple[str, str | None], type] = {}


def __getattr__(name: str) -> Any:
    # `GuardedHttpTools` / `GuardedH11`, built on first use (uvicorn imports them by name)
    # with the limits `uvicorn_options` recorded: importing this module costs no uvicorn.
    parser = _PARSER_OF.get(name)
    if parser is None:
        raise AttributeError(name)
    key = (name, os.environ.get(ENV_LIMITS))
    cls = _built.get(key)
    if cls is None:
        cls = _built[key] = guarded_protocol(parser, limits_from_env())
    return cls


_REASONS = {408: b"Request Timeout", 431: b"Request Header Fields Too Large",
            503: b"Service Unavailable"}


def _refusal(status: int) -> bytes:
    body = _REASONS[status]
    return (b"HTTP/1.1 %d %s\r\ncontent-type: text/plain; charset=utf-8\r\n"
            b"content-length: %d\r\nconnection: close\r\n\r\n%s"
            % (status, body, len(body), body))


def _block_end(tail: bytes, data: bytes) -> int:
    """Where in `data` the header block ends (just past its blank line), or -1: `tail` is the
    block's last bytes before `data` (at most 3), so a blank line split across reads is found."""
    if tail:
        joined = tail + data[:3]
        at = joined.find(b"\r\n\r\n")
        if at >= 0:
            return at + 4 - len(tail)
    at = data.find(b"\r\n\r\n")
    return at + 4 if at >= 0 else -1


def trusted_hosts(spec: Any) -> Callable[[str], bool]:
    """uvicorn's `forwarded_allow_ips` (a comma-separated string or a list of addresses and
    networks, `*` for any) as a test of one address."""
    import ipaddress

    items = [i.strip() for i in (spec.split(",") if isinstance(spec, str) else spec or [])]
    if "*" in items:
        return lambda host: True
    hosts: set[str] = set()
    networks: list[Any] = []
    for item in items:
        if "/" in item:
            with contextlib.suppress(ValueError):
                networks.append(ipaddress.ip_network(item, strict=False))
        elif item:
            hosts.add(item)

    def trusted(host: str) -> bool:
        if host in hosts:
            return True
        if not networks:
            return False
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in networks)

    return trusted


def forwarded_client(headers: list[tuple[bytes, bytes]],
                     trusted: Callable[[str], bool]) -> str | None:
    """The client a trusted proxy names in `X-Forwarded-For`, read as uvicorn reads it: the
    nearest address that is not itself a trusted proxy (the farthest when all are)."""
    values = [value for name, value in headers if name.lower() == b"x-forwarded-for"]
    if not values:
        return None
    hosts = [h.strip() for h in b",".join(values).decode("latin-1").split(",") if h.strip()]
    for host in reversed(hosts):
        if not trusted(host):
            return host[:64]
    return hosts[0][:64] if hosts else None


def _parsed_size(url: bytes, headers: list[tuple[bytes, bytes]]) -> int:
    """A lower bound of a parsed header block's size: its target, names and values (the parser
    drops the method, version and optional whitespace)."""
    return len(url) + sum(len(name) + len(value) + 4 for name, value in headers)


def guarded_protocol(http: str, limits: HttpLimits) -> type:
    """A subclass of uvicorn's `http` protocol class that enforces `limits`."""
    if http == "httptools":
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as base
    elif http == "h11":
        from uvicorn.protocols.http.h11_impl import H11Protocol as base  # type: ignore[assignment]
    else:
        raise ValueError(f"unknown HTTP parser {http!r} (httptools or h11)")
    cap = limits.connection_cap()
    per_peer = min(limits.max_connections_per_peer, cap)
    peers: dict[str, int] = {}  # open connections per client address, in this worker
    trust: list[Any] = [None]  # the forwarded_allow_ips test, built from the first config
    warned = [-1e9]
    coalesce: Any = None
    if http == "httptools":
        from . import eager
        from .coalesce import CoalescingTransport as coalesce

    class Guarded(base):
        _refused = False
        # One timer per connection for both deadlines: `_deadline` is when the phase being timed
        # (headers, or a body) must end, 0.0 for none; `_timer` fires at `_timer_at` and is
        # made anew only when it fired before the deadline or would fire after a nearer one.
        # Each request then costs a clock read, not a timer made and cancelled (~3 us).
        _timer: asyncio.TimerHandle | None = None
        _timer_at = 0.0
        _deadline = 0.0
        _header_bytes = 0
        _tail = b""  # the last bytes of the header block so far: its blank line may straddle reads
        _measured = False  # the block the parser completes next was counted to its end already
        _seen: Any = None
        _reading_headers = False
        _idle = False  # answered, waiting for the next request: the deadline is keep-alive's

        def connection_made(self, transport: Any) -> None:
            # httptools: each fixed-length answer leaves in one write (coalesce.py).
            super().connection_made(transport if coalesce is None else coalesce(transport, self))
            if len(self.connections) > cap:
                self.logger.warning("connection cap (%d) reached: answering 503", cap)
                self._refuse(503)
                return
            peer = self.client[0] if self.client else None
            if peer is not None:
                if self._via_proxy(peer):
                    self._proxied = True  # counted per forwarded client, request by request
                elif not self._count(peer):
                    self._refuse(503)
                    return
            self._start_headers()

        def connection_lost(self, exc: Exception | None) -> None:
            self._uncount()
            self._stop_timer()
            super().connection_lost(exc)

        # -- one peer's share of the connections (HttpLimits.max_connections_per_peer) --------

        _peer: str | None = None  # the address this connection is counted under
        _proxied = False

        def _via_proxy(self, peer: str) -> bool:
            if not self.config.proxy_headers:
                return False
            trusted: Callable[[str], bool] | None = trust[0]
            if trusted is None:
                trusted = trust[0] = trusted_hosts(self.config.forwarded_allow_ips)
            return trusted(peer)

        def _count(self, key: str) -> bool:
            held = peers.get(key, 0)
            if held >= per_peer:
                now = self.loop.time()
                if now - warned[0] >= 10.0:  # one line per 10 s, not one per refused connection
                    warned[0] = now
                    self.logger.warning("a client holds %d connections (max_connections_per_peer):"
                                        " answering 503", per_peer)
                return False
            peers[key] = held + 1
            self._peer = key
            return True

        def _uncount(self) -> None:
            key = self._peer
            if key is not None:
                self._peer = None
                held = peers[key] - 1
                if held:
                    peers[key] = held
                else:
                    del peers[key]

        def _forwarded_client(self) -> bool:
            """A proxied request's headers are in: count the connection under the client the
            proxy names; False (and 503) when that client holds its share already."""
            trusted = trust[0]
            assert trusted is not None
            client = forwarded_client(self.headers, trusted)
            if client is None or client == self._peer:
                return True
            self._uncount()
            return self._count(client)

        def _received(self, data: bytes) -> None:
            if self._refused:
                return
            cycle = self.cycle
            if not self._reading_headers and (cycle is None or cycle.response_complete):
                self._start_headers()  # the first byte of the next request on this connection
            if self._reading_headers:
                # Exact: the block ends at its blank line, which may arrive in this read, even
                # split across the last one (so a block whose end comes in the last read is
                # counted to its end, not let through whole; 126 KiB passed a 64 KiB limit).
                end = _block_end(self._tail, data)
                if end < 0:
                    self._header_bytes += len(data)
                    self._tail = (self._tail + data)[-3:] if len(data) < 3 else data[-3:]
                else:
                    self._header_bytes += end
                    self._measured = True
                if self._header_bytes > limits.max_header_bytes:
                    self._refuse(431)  # before the parser buffers any more of it
                    return
            super().data_received(data)
            if self._refused:
                return
            cycle = self.cycle
            if cycle is not None and cycle is not self._seen:
                # A new request's headers are complete: now the body has its own deadline.
                self._seen = cycle
                self._reading_headers = False
                if len(self.headers) > limits.max_headers:
                    self._refuse(431)
                    return
                if self._proxied and not self._forwarded_client():
                    self._refuse(503)
                    return
                self._deadline = 0.0
                if cycle.more_body:
                    self._arm(limits.body_timeout)
            elif self._reading_headers and self._header_bytes > limits.max_header_bytes:
                self._refuse(431)
                return
            if cycle is not None and not cycle.more_body and not self._reading_headers:
                self._deadline = 0.0

        if http == "httptools":
            # A request whose headers the parser completes in this call starts after it returns,
            # at once rather than as a task (eager.py); pipelined ones keep uvicorn's tasks.
            _feeding = False
            _deferred: Any = None

            def data_received(self, data: bytes) -> None:
                self._feeding = True
                try:
                    self._received(data)
                finally:
                    # Taken even if the parser's callbacks failed: never run by a later call.
                    self._feeding = False
                    deferred, self._deferred = self._deferred, None
                if deferred is not None and not self._refused:
                    cycle, app = deferred
                    # The context uvicorn's own task would get (`reset_contextvars` is an option
                    # of newer uvicorn releases only).
                    context = (contextvars.Context()
                               if getattr(self.config, "reset_contextvars", False)
                               else contextvars.copy_context())
                    eager.start(cycle.run_asgi(app), self.loop, self.tasks, context)

            def _start_asgi_task(self, cycle: Any, app: Any) -> None:
                if self._feeding and self._deferred is None:
                    self._deferred = (cycle, app)
                else:
                    super()._start_asgi_task(cycle, app)
        else:
            data_received = _received

        # httptools: refuse too many headers before uvicorn starts the app for them. Their bytes
        # are counted exactly in data_received for the block that read ends; a block parsed
        # from the same read after it (pipelined) is measured here, by what the parser kept.
        def on_headers_complete(self) -> None:
            if len(self.headers) > limits.max_headers:
                self._refuse(431)
                raise ValueError("too many headers")  # stops the parser; answered already
            if self._measured:
                self._measured = False
            elif _parsed_size(self.url, self.headers) > limits.max_header_bytes:
                self._refuse(431)
                raise ValueError("header block too large")
            super().on_headers_complete()

        if http == "httptools":
            def on_response_complete(self) -> None:
                # A head still held goes out now: no body follows it. uvicorn writes none for
                # HEAD (nor for a body shorter than its content length), and a held head used
                # to wait for the keep-alive timeout's close: 5 s for every HEAD (coalesce.py).
                coalescing: Any = self.transport  # a CoalescingTransport under httptools
                coalescing.flush()
                # uvicorn arms a keep-alive timer after every answer (a timer made, and cancelled
                # by the next request: about 6k instructions and 450 L1 misses a request). The
                # connection's one deadline timer times the idle spell instead. Pipelined
                # requests and closing connections keep uvicorn's own handling.
                if self.pipeline or self.transport.is_closing():
                    super().on_response_complete()
                    return
                self.server_state.total_requests += 1
                self.flow.resume_reading()
                self._idle = True
                self._arm(limits.keepalive_timeout)

        def send_400_response(self, msg: str) -> None:
            if not self._refused:
                super().send_400_response(msg)

        def _start_headers(self) -> None:
            self._idle = False
            self._reading_headers = True
            self._header_bytes = 0
            self._tail = b""
            self._measured = False
            self._arm(limits.header_timeout)

        def _arm(self, seconds: float) -> None:
            deadline = self.loop.time() + seconds
            self._deadline = deadline
            timer = self._timer
            if timer is None or self._timer_at > deadline:
                if timer is not None:
                    timer.cancel()
                self._schedule(deadline)

        def _schedule(self, deadline: float) -> None:
            self._timer = self.loop.call_at(deadline, self._check_deadline)
            self._timer_at = deadline

        def _check_deadline(self) -> None:
            self._timer = None
            deadline = self._deadline
            if not deadline:
                return  # the phase ended in time; the next one arms its own timer
            if self.loop.time() < deadline:
                self._schedule(deadline)
                return
            self._deadline = 0.0
            self._timed_out()

        def _stop_timer(self) -> None:
            self._deadline = 0.0
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _timed_out(self) -> None:
            if self._idle:  # keep-alive ran out with no new request: let the connection go
                self._idle = False
                if not self.transport.is_closing():
                    self.transport.close()
                return
            cycle = self.cycle
            if cycle is not None and not self._reading_headers and not cycle.more_body:
                return  # the request arrived whole in the meantime
            if cycle is not None and cycle.response_complete and not self._reading_headers:
                # Answered already (perhaps before reading the body): just let the connection go.
                self._refused = True
                self.transport.close()
                return
            if cycle is not None and not self._reading_headers:
                cycle.disconnected = True  # the app sees http.disconnect, not a hang
                cycle.message_event.set()
                if cycle.response_started:
                    self._refused = True
                    self.transport.close()
                    return
            self._refuse(408)

        def _refuse(self, status: int) -> None:
            self._refused = True
            self._stop_timer()
            transport = self.transport
            if transport is not None and not transport.is_closing():
                transport.write(_refusal(status))
                transport.close()

    Guarded.__name__ = Guarded.__qualname__ = f"Guarded{base.__name__}"
    return Guarded
