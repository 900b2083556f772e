"""What the endpoint's header checks conclude from one POST's header block, judged once per block.

A client sends the same headers on every request (same host, accept, content type, routing
headers and version; often the same length, for the same call). The checks on them are pure
functions of the block, so `Verdicts` keeps their conclusions keyed by the block itself and a
repeated block costs one dictionary lookup instead of a header map and five checks. The checks
keep their one home (`checks.py`, `HttpApp._host_ok`, the routing rules in `http.py`); this only
remembers what they said.

Bounded: at most `MAX_BLOCKS` blocks, none over `MAX_BLOCK_BYTES`, and never a block carrying
credentials (`Authorization`, `Cookie`, `Proxy-Authorization`): those are judged afresh each
time and not kept in memory past their request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .asgi import Headers, header_map, header_value
from .checks import header_problem

MAX_BLOCKS = 128
MAX_BLOCK_BYTES = 2048
_CREDENTIALS = (b"authorization", b"cookie", b"proxy-authorization")


class HeaderFacts:
    """The conclusions for one header block of a POST to the endpoint."""

    __slots__ = ("headers", "refused", "host_ok", "version", "tool_name")

    def __init__(self, headers: Headers, host_ok: Callable[[Headers], bool]) -> None:
        self.headers = headers
        self.refused = header_problem(headers, "POST")
        self.host_ok = host_ok(headers)
        # `MCP-Protocol-Version` as the version check reads it (None when absent).
        self.version = header_value(headers, b"mcp-protocol-version", " \t")
        # The tool a plain `tools/call` routing names (see `plain_tool_name`), else None.
        self.tool_name = plain_tool_name(headers)


def plain_tool_name(headers: Headers) -> bytes | None:
    """The raw `Mcp-Name` of the usual `tools/call` routing: `Mcp-Method: tools/call` and
    `Mcp-Name` given once each, and `MCP-Protocol-Version` at most once. None otherwise. A body
    whose method is `tools/call` and whose (plain) tool name is these bytes passes every routing
    check (`http._check_routing`)."""
    method = headers.get(b"mcp-method")
    name = headers.get(b"mcp-name")
    version = headers.get(b"mcp-protocol-version")
    if (method is None or name is None or len(method) != 1 or len(name) != 1
            or method[0] != b"tools/call" or (version is not None and len(version) != 1)):
        return None
    return name[0]


class Verdicts:
    """`HeaderFacts` by header block, for one app (its host check is part of the verdict)."""

    __slots__ = ("_host_ok", "_kept")

    def __init__(self, host_ok: Callable[[Headers], bool]) -> None:
        self._host_ok = host_ok
        self._kept: dict[Any, HeaderFacts] = {}

    def __len__(self) -> int:
        return len(self._kept)

    def facts(self, scope: dict[str, Any]) -> HeaderFacts:
        raw = scope["headers"]
        try:
            key: Any = tuple(raw)
            facts = self._kept.get(key)
        except TypeError:  # header pairs as lists (some servers): not hashable, judged each time
            key = facts = None
        if facts is not None:
            return facts
        headers = header_map(scope)
        facts = HeaderFacts(headers, self._host_ok)
        if key is not None and _keepable(raw, headers):
            kept = self._kept
            if len(kept) >= MAX_BLOCKS:
                kept.clear()
            kept[key] = facts
        return facts


def _keepable(raw: Any, headers: Headers) -> bool:
    for name in _CREDENTIALS:
        if name in headers:
            return False
    size = 0
    for name, value in raw:
        size += len(name) + len(value)
    return size <= MAX_BLOCK_BYTES
