"""What the endpoint's header checks conclude from one POST's header block, judged once per block.

A client sends the same headers on every request (same host, accept, content type, routing
headers and version; often the same length, for the same call). The checks on them are pure
functions of the block, so `Verdicts` keeps their conclusions keyed by the block itself and a
repeated block costs one dictionary lookup instead of a header map and five checks. The checks
keep their one home (`inbound.py`); this only remembers what they said.

Bounded: at most `MAX_BLOCKS` blocks, none over `MAX_BLOCK_BYTES`. Credentials
(`Authorization`, `Cookie`, `Proxy-Authorization`) are never kept in memory past their request:
no check here reads them, so a block carrying them is judged, and remembered, without them, and
each request's own credentials are added to a copy of the remembered header map. A client that
sends a bearer token with every request (the usual authorized client) then pays for one scan of
its block, not for a header map and five checks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .asgi import Headers, header_map, header_value
from .inbound import header_problem

MAX_BLOCKS = 128
MAX_BLOCK_BYTES = 2048
_CREDENTIALS = frozenset({b"authorization", b"cookie", b"proxy-authorization"})


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

    def with_headers(self, headers: Headers) -> HeaderFacts:
        """The same conclusions for a request whose header map is `headers` (its credentials
        added to the judged block's)."""
        facts: HeaderFacts = object.__new__(HeaderFacts)
        facts.headers = headers
        facts.refused = self.refused
        facts.host_ok = self.host_ok
        facts.version = self.version
        facts.tool_name = self.tool_name
        return facts


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
        if key is not None:
            bare = tuple([pair for pair in key if pair[0] not in _CREDENTIALS])
            if len(bare) != len(key):
                return self._with_credentials(key, bare)
        headers = header_map(scope)
        facts = HeaderFacts(headers, self._host_ok)
        if key is not None and _keepable(raw, headers):
            self._keep(key, facts)
        return facts

    def _with_credentials(self, key: tuple[Any, ...], bare: tuple[Any, ...]) -> HeaderFacts:
        """The facts of a block carrying credentials: those of the block without them (judged
        once, remembered), with this request's credentials added to a copy of its header map."""
        base = self._kept.get(bare)
        if base is None:
            base = HeaderFacts(header_map({"headers": bare}), self._host_ok)
            if _keepable(bare, base.headers):
                self._keep(bare, base)
        headers = dict(base.headers)  # the lists are shared and only read
        for name, value in key:
            if name in _CREDENTIALS:
                have = headers.get(name)
                headers[name] = [value] if have is None else [*have, value]
        return base.with_headers(headers)

    def _keep(self, key: tuple[Any, ...], facts: HeaderFacts) -> None:
        kept = self._kept
        if len(kept) >= MAX_BLOCKS:
            kept.clear()
        kept[key] = facts


def _keepable(raw: Any, headers: Headers) -> bool:
    # A credential named in another case than ASGI's lower case was not stripped: not kept.
    for name in _CREDENTIALS:
        if name in headers:
            return False
    size = 0
    for name, value in raw:
        size += len(name) + len(value)
    return size <= MAX_BLOCK_BYTES
