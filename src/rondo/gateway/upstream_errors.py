"""What of an upstream's error reaches a proxy's client or log: its JSON-RPC code, and its text
clipped to `MAX_TEXT` characters (an upstream is another party's server; its message may be
megabytes). Every relayed path (calls, the bridge, tasks, completion, per-caller lists) passes
an upstream's `McpError` on through `passed_on`."""

from __future__ import annotations

from typing import Any

from ..wire.errors import McpError

MAX_TEXT = 1024  # characters of an upstream's error message passed on


def clip(text: str) -> str:
    """An upstream's text as far as it may reach a client or a log line."""
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "..."


def passed_on(exc: McpError, data: Any = None) -> McpError:
    """The upstream's error as the proxy answers it: same code, clipped message, `data` only
    as the caller decides (most paths pass none on)."""
    return McpError(exc.code, clip(exc.message), data)
