"""Middleware for `rondo.Server(middleware=[...])`, and the ready-made ones in the box.

A middleware is `async def mw(request, call_next)`: `request` is a read-only `RequestView`,
`await call_next(request)` runs the rest of the chain and returns the result; return your own
result (or raise `rondo.McpError`) to short-circuit. See docs/middleware.md.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from typing import Any

from .core.middleware import RequestView
from .server.middleware import CallNext, Middleware
from .wire.errors import McpError

RATE_LIMITED = -32029  # implementation-defined server error range of JSON-RPC (-32000..-32099)


class RequestLog:
    """Log one line per request round: method, name, id, era, principal, outcome and time.

    Outcome is `ok`, `input_required`, `tool_error` or `error <code>`. Arguments, answers and
    tokens are never logged. What the client sent (method, name or URI, id) and the principal
    are escaped (`loggable`): a newline in a tool name cannot forge a second line.
    """

    def __init__(self, logger: logging.Logger | str = "rondo.requests", level: int = logging.INFO,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.log = logging.getLogger(logger) if isinstance(logger, str) else logger
        self.level = level
        self.clock = clock

    async def __call__(self, request: RequestView, call_next: CallNext) -> Any:
        if not self.log.isEnabledFor(self.level):
            return await call_next(request)
        start = self.clock()
        outcome = "error"
        try:
            result = await call_next(request)
            if not isinstance(result, dict):
                outcome = "ok"  # per-component middleware sees the handler's own value
            elif result.get("resultType") == "input_required":
                outcome = "input_required"
            elif result.get("isError") is True:
                outcome = "tool_error"
            else:
                outcome = "ok"
            return result
        except McpError as exc:
            outcome = f"error {exc.code}"
            raise
        finally:
            ms = (self.clock() - start) * 1000
            request.extras.setdefault("elapsed_ms", ms)
            self.log.log(self.level, "%s %s id=%s era=%s principal=%s -> %s in %.1f ms",
                         loggable(request.method), loggable(request.name or "-"),
                         loggable(repr(request.id)), request.era,
                         loggable(request.principal or "-"), outcome, ms)


# What a client controls and a log line must not carry raw: line breaks (C0, C1, U+2028/2029),
# other control characters and the backslash that would make an escape ambiguous.
_UNSAFE = re.compile("[\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029\\\\]")


def loggable(text: object, limit: int = 200) -> str:
    """`text` safe to put in one log line: control characters, line and paragraph separators and
    backslashes escaped (`\\n`, `\\x1b`, `\\u2028`, `\\\\`), then cut to `limit` characters
    (`...` marks a cut). A client cannot forge a line or a terminal escape through it."""
    value = text if isinstance(text, str) else str(text)
    if len(value) > limit * 4:
        value = value[: limit * 4]  # escaping at most quadruples: no need to look further
    escaped = _UNSAFE.sub(_escape, value)
    return escaped if len(escaped) <= limit else escaped[: limit - 3] + "..."


def _escape(match: Any) -> str:
    char: str = match.group()
    if char == "\\":
        return "\\\\"
    return char.encode("unicode_escape").decode("ascii")


class RateLimit:
    """A token bucket per principal: `rate` requests a second on average, bursts of `burst`.

    The key is `key(request)`, by default the request's principal (from the server's
    `StatePolicy`), with every anonymous request sharing one bucket. Over the limit, the request
    is refused with JSON-RPC error -32029 and `data.retryAfterMs`. At most `max_keys` buckets
    are kept (the least recently used goes first), so memory stays bounded whatever the keys.
    Every round of an MRTR flow is a request and takes a token.
    """

    def __init__(self, rate: float, burst: int | None = None, *,
                 key: Callable[[RequestView], Any] | None = None, max_keys: int = 10_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not isinstance(rate, int | float) or isinstance(rate, bool) or rate <= 0:
            raise ValueError("rate must be a positive number of requests per second")
        burst = max(1, int(rate)) if burst is None else burst
        if not isinstance(burst, int) or isinstance(burst, bool) or burst < 1:
            raise ValueError("burst must be a positive integer")
        if not isinstance(max_keys, int) or max_keys < 1:
            raise ValueError("max_keys must be a positive integer")
        self.rate = float(rate)
        self.burst = burst
        self.key = key or _principal_key
        self.max_keys = max_keys
        self.clock = clock
        self._buckets: dict[Any, list[float]] = {}  # key -> [tokens, last refill]

    def take(self, key: Any) -> float:
        """Take a token for `key`: 0.0 if granted, else the seconds until one is available."""
        now = self.clock()
        buckets = self._buckets
        bucket = buckets.pop(key, None)
        if bucket is None:
            bucket = [float(self.burst), now]
            while len(buckets) >= self.max_keys:
                del buckets[next(iter(buckets))]
        tokens = min(float(self.burst), bucket[0] + (now - bucket[1]) * self.rate)
        bucket[1] = now
        buckets[key] = bucket  # re-inserted last: dict order is recency
        if tokens >= 1.0:
            bucket[0] = tokens - 1.0
            return 0.0
        bucket[0] = tokens
        return (1.0 - tokens) / self.rate

    async def __call__(self, request: RequestView, call_next: CallNext) -> Any:
        wait = self.take(self.key(request))
        if wait:
            raise McpError(RATE_LIMITED, "Rate limit exceeded", {"retryAfterMs": int(wait * 1000) + 1})
        return await call_next(request)


class MaskErrors:
    """Per-component middleware: an unexpected exception in the handler becomes a tool error
    with a fixed message and a reference id, and the exception goes to the log with that id.

    Without it, a tool's unexpected exception reaches the model as `Tool 'x' failed: <text>`,
    which may carry internals. `ToolError`, `McpError` and the legacy `AskError`s pass through:
    their messages are meant for the client. Use it as `@server.tool(middleware=[MaskErrors()])`
    (server middleware sees results, not the handler's exceptions).
    """

    def __init__(self, message: str = "The tool failed. Please try again later.",
                 logger: logging.Logger | str = "rondo.errors") -> None:
        self.message = message
        self.log = logging.getLogger(logger) if isinstance(logger, str) else logger

    async def __call__(self, request: RequestView, call_next: CallNext) -> Any:
        from .legacy.ask import AskError
        from .server.content import ToolError

        try:
            return await call_next(request)
        except (ToolError, McpError, AskError):
            raise
        except Exception:
            import secrets

            ref = secrets.token_hex(4)
            self.log.exception("%s %s failed (reference %s)", request.method, request.component, ref)
            raise ToolError(f"{self.message} (reference {ref})") from None


def _principal_key(request: RequestView) -> Any:
    return request.principal


__all__ = [
    "RATE_LIMITED", "CallNext", "MaskErrors", "Middleware", "RateLimit", "RequestLog", "RequestView",
    "loggable",
]
