"""What a decorator registers: tools, resources, resource templates and prompts.

Each component keeps its wire description precomputed, so listing is a slice of ready dicts.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

from ..wire.headers import header_bindings, plain_header_value
from ..wire.uritemplate import UriTemplate

CacheScope = str  # "public" | "private"
_SCOPES = ("public", "private")


def check_cache(ttl_ms: int | None, cache_scope: str | None) -> None:
    if ttl_ms is not None and (not isinstance(ttl_ms, int) or isinstance(ttl_ms, bool) or ttl_ms < 0):
        raise ValueError(f"ttl_ms must be a non-negative integer, got {ttl_ms!r}")
    if cache_scope is not None and cache_scope not in _SCOPES:
        raise ValueError(f"cache_scope must be 'public' or 'private', got {cache_scope!r}")


def check_tags(tags: Iterable[str] | None, what: str) -> frozenset[str]:
    """`tags=` as a frozenset: an iterable (not one string) of non-empty strings."""
    if tags is None:
        return frozenset()
    if isinstance(tags, str | bytes) or not isinstance(tags, Iterable):
        raise TypeError(f"{what}: tags= is a set of strings, got {tags!r}")
    made = frozenset(tags)
    if not all(isinstance(t, str) and t and t == t.strip() for t in made):
        raise ValueError(f"{what}: each tag is a non-empty string with no outer spaces: {tags!r}")
    return made


def describe(fn: Callable[..., Any], description: str | None) -> str | None:
    if description is not None:
        return description
    doc = inspect.getdoc(fn)
    return doc.strip() if doc else None


def _put(d: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        d[key] = value


TASK_MODES = ("optional", "required")


class Tool:
    """`task` is None (never a task), "optional" or "required" (the tasks extension);
    `middleware` the tool's own middleware (server/middleware.py). `relay`, None unless set
    after registration: an async `(ctx, arguments) -> result object | InputRequired` that
    answers a 2026-07-28 call from its arguments as given, unbound and unchecked (a proxy's
    relay: the upstream checks its own arguments). `core/relay.py` says when it is used."""

    __slots__ = ("name", "fn", "signature", "wire", "header_params", "task", "middleware",
                 "express", "header_name", "tags", "relay")

    def __init__(
        self, name: str, fn: Callable[..., Any], signature: Any, wire: dict[str, Any],
        task: str | None = None, middleware: tuple[Any, ...] = (),
        tags: frozenset[str] = frozenset(),
    ) -> None:
        self.name = name
        self.tags = tags  # server-side labels (`tags=`), never on the wire
        self.task = task
        self.middleware = middleware
        self.fn = fn
        self.signature = signature
        self.wire = wire
        # x-mcp-header annotations as (argument path, header name) pairs: the rule the client
        # applies too, so a tool it would drop is refused here, at registration.
        self.header_params = header_bindings(wire["inputSchema"])
        # A plain synchronous `def`, no task, no middleware: server/express.py may run it.
        self.express = not (signature.is_async or signature.threaded or task or middleware)
        # The name as an `Mcp-Name` header carries it verbatim, or None when it must be encoded.
        self.header_name = name.encode() if plain_header_value(name) else None
        self.relay: Callable[..., Any] | None = None


def tool_wire(
    name: str,
    *,
    title: str | None,
    description: str | None,
    input_schema: dict[str, Any],
    output_schema: dict[str, Any] | None,
    annotations: dict[str, Any] | None,
    icons: list[dict[str, Any]] | None,
    meta: dict[str, Any] | None,
) -> dict[str, Any]:
    wire: dict[str, Any] = {"name": name}
    _put(wire, "title", title)
    _put(wire, "description", description)
    wire["inputSchema"] = input_schema
    _put(wire, "outputSchema", output_schema)
    _put(wire, "annotations", annotations)
    _put(wire, "icons", icons)
    _put(wire, "_meta", meta)
    return wire


class Resource:
    """A readable resource: a static URI (`template` None) or an RFC 6570 template."""

    __slots__ = ("uri", "template", "fn", "signature", "wire", "mime_type", "ttl_ms", "cache_scope",
                 "middleware", "tags")

    def __init__(
        self,
        uri: str,
        fn: Callable[..., Any],
        signature: Any,
        wire: dict[str, Any],
        mime_type: str | None,
        ttl_ms: int | None,
        cache_scope: str | None,
        template: UriTemplate | None = None,
        middleware: tuple[Any, ...] = (),
        tags: frozenset[str] = frozenset(),
    ) -> None:
        self.uri = uri
        self.tags = tags
        self.middleware = middleware
        self.template = template
        self.fn = fn
        self.signature = signature
        self.wire = wire
        self.mime_type = mime_type
        self.ttl_ms = ttl_ms
        self.cache_scope = cache_scope


class Prompt:
    __slots__ = ("name", "fn", "signature", "wire", "required", "middleware", "tags")

    def __init__(
        self, name: str, fn: Callable[..., Any], signature: Any, wire: dict[str, Any],
        middleware: tuple[Any, ...] = (), tags: frozenset[str] = frozenset(),
    ) -> None:
        self.name = name
        self.tags = tags
        self.middleware = middleware
        self.fn = fn
        self.signature = signature
        self.wire = wire
        self.required = tuple(
            a["name"] for a in wire.get("arguments", ()) if a.get("required")
        )
