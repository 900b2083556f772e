"""Typed views of what the server returns.

Each result is a msgspec Struct built from the decoded JSON. Anything the client must pass on
unchanged (a tool's `inputSchema`, content blocks, `_meta`) stays plain JSON so nothing is lost
in translation: JSON Schema keywords such as `$defs`, `$anchor` or `if`/`then` survive verbatim.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from rondo.client.errors import ProtocolError

Json = dict[str, Any]
_T = TypeVar("_T")


class _Result(msgspec.Struct, kw_only=True, rename="camel", frozen=True):
    meta: Json | None = msgspec.field(default=None, name="_meta")


class Tool(_Result, frozen=True):
    name: str
    input_schema: Json = msgspec.field(default_factory=lambda: {"type": "object"})
    title: str | None = None
    description: str | None = None
    output_schema: Json | None = None
    annotations: Json | None = None
    icons: list[Json] | None = None
    execution: Json | None = None


class Resource(_Result, frozen=True):
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Json | None = None
    icons: list[Json] | None = None


class ResourceTemplate(_Result, frozen=True):
    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: Json | None = None
    icons: list[Json] | None = None


class PromptArgument(msgspec.Struct, kw_only=True, frozen=True):
    name: str
    title: str | None = None
    description: str | None = None
    required: bool = False


class Prompt(_Result, frozen=True):
    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgument] = msgspec.field(default_factory=list)
    icons: list[Json] | None = None


def _texts(blocks: list[Json]) -> str:
    return "\n".join(b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str))


class CallToolResult(_Result, frozen=True):
    content: list[Json] = msgspec.field(default_factory=list)
    structured_content: Any = None
    is_error: bool = False

    @property
    def text(self) -> str:
        """The text blocks of `content`, joined by newlines."""
        return _texts(self.content)


class ReadResourceResult(_Result, frozen=True):
    contents: list[Json] = msgspec.field(default_factory=list)
    ttl_ms: int | None = None
    cache_scope: str | None = None

    @property
    def text(self) -> str:
        """The `text` of every text content, joined by newlines."""
        return "\n".join(c["text"] for c in self.contents if isinstance(c.get("text"), str))


class PromptMessage(msgspec.Struct, kw_only=True, frozen=True):
    role: str
    content: Json


class GetPromptResult(_Result, frozen=True):
    messages: list[PromptMessage] = msgspec.field(default_factory=list)
    description: str | None = None

    @property
    def text(self) -> str:
        """The text blocks of every message, joined by newlines."""
        return _texts([m.content for m in self.messages])


class Completion(_Result, frozen=True):
    values: list[str] = msgspec.field(default_factory=list)
    total: int | None = None
    has_more: bool = False


class DiscoverResult(_Result, frozen=True):
    supported_versions: list[str] = msgspec.field(default_factory=list)
    capabilities: Json = msgspec.field(default_factory=dict)
    instructions: str | None = None
    ttl_ms: int | None = None
    cache_scope: str | None = None

    @property
    def server_info(self) -> Json | None:
        info = (self.meta or {}).get("io.modelcontextprotocol/serverInfo")
        return info if isinstance(info, dict) else None


class InitializeResult(msgspec.Struct, kw_only=True, rename="camel", frozen=True):
    """What a 2025-11-25 server answered to `initialize`."""

    protocol_version: str
    capabilities: Json = msgspec.field(default_factory=dict)
    server_info: Json = msgspec.field(default_factory=dict)
    instructions: str | None = None


class PendingCall(msgspec.Struct, kw_only=True):
    """A call paused on input: what the server asked for, and what is needed to resume it.

    `method` and `params` are the original request (without `_meta`); `input_requests` maps each
    key to an input request (`{"method", "params"}`); `request_state` is the opaque string to
    echo byte for byte (None when the server sent none). `to_json()` / `from_json()` carry a
    pending call to another process, where `Client.resume(...)` picks it up.
    """

    method: str
    params: Json
    input_requests: dict[str, Json] = msgspec.field(default_factory=dict)
    request_state: str | None = None
    rounds: int = 0

    def to_json(self) -> bytes:
        return msgspec.json.encode(self)

    @classmethod
    def from_json(cls, data: bytes | str) -> PendingCall:
        return msgspec.json.decode(data, type=cls)


def convert(data: Any, type_: type[_T], what: str) -> _T:
    """`data` as `type_`, or a ProtocolError naming what was malformed."""
    try:
        return msgspec.convert(data, type_)
    except msgspec.ValidationError as exc:
        raise ProtocolError(f"malformed {what}: {exc}") from None
