"""Content blocks, prompt messages and resource contents as plain JSON-ready dicts.

Helpers build dicts (fast to encode, nothing to convert); the kernel's `core/results.py` turns
whatever a handler returned into the body of a `tools/call`, `prompts/get` or `resources/read`
result.
The TypedDicts in `wire/content_types.py` are only names for those dicts: annotate a tool
`-> ContentBlock` or `-> list[ContentBlock]` and it gets no output schema (its result is
content, not data).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeGuard

import msgspec

if TYPE_CHECKING:
    from ..wire.content_types import (
        AudioContent,
        EmbeddedResource,
        ImageContent,
        PromptMessage,
        ResourceLink,
        Role,
        TextContent,
    )

# The TypedDicts naming these dicts live in `wire/content_types` and load on first use.
_TYPE_NAMES = frozenset({"Role", "TextContent", "ImageContent", "AudioContent", "EmbeddedResource",
                         "ResourceLink", "PromptMessage", "ContentBlock", "CONTENT_TYPES"})


def __getattr__(name: str) -> Any:
    if name in _TYPE_NAMES:
        from ..wire import content_types

        return getattr(content_types, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# A dict counts as a content block when its `type` is one of these and it has the keys that
# type requires; checking the keys keeps `{"type": "text", "value": 3}` data out of `content`.
_REQUIRED_KEYS: dict[str, tuple[str, ...]] = {
    "text": ("text",),
    "image": ("data", "mimeType"),
    "audio": ("data", "mimeType"),
    "resource": ("resource",),
    "resource_link": ("uri", "name"),
}


def _b64(data: bytes | bytearray | memoryview | str) -> str:
    """Bytes become base64; a str is taken to be base64 already."""
    if isinstance(data, str):
        return data
    from binascii import b2a_base64  # an extension module: loaded with the first binary block

    return b2a_base64(data, newline=False).decode("ascii")


def _extras(
    block: dict[str, Any], annotations: Mapping[str, Any] | None, meta: Mapping[str, Any] | None
) -> dict[str, Any]:
    if annotations is not None:
        block["annotations"] = dict(annotations)
    if meta is not None:
        block["_meta"] = dict(meta)
    return block


# -- content blocks ---------------------------------------------------------------------------


def text(
    s: str, *, annotations: Mapping[str, Any] | None = None, meta: Mapping[str, Any] | None = None
) -> TextContent:
    """A `text` content block."""
    return _extras({"type": "text", "text": s}, annotations, meta)  # type: ignore[return-value]


def image(
    data: bytes | str,
    mime_type: str,
    *,
    annotations: Mapping[str, Any] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> ImageContent:
    """An `image` block; `data` is raw bytes or a base64 string."""
    block = {"type": "image", "data": _b64(data), "mimeType": mime_type}
    return _extras(block, annotations, meta)  # type: ignore[return-value]


def audio(
    data: bytes | str,
    mime_type: str,
    *,
    annotations: Mapping[str, Any] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> AudioContent:
    """An `audio` block; `data` is raw bytes or a base64 string."""
    block = {"type": "audio", "data": _b64(data), "mimeType": mime_type}
    return _extras(block, annotations, meta)  # type: ignore[return-value]


def resource_text(uri: str, text: str, mime_type: str | None = None) -> dict[str, Any]:
    """`TextResourceContents`: one item of a `resources/read` result or an embedded resource."""
    item: dict[str, Any] = {"uri": uri}
    if mime_type is not None:
        item["mimeType"] = mime_type
    item["text"] = text
    return item


def resource_blob(uri: str, data: bytes | str, mime_type: str | None = None) -> dict[str, Any]:
    """`BlobResourceContents`; `data` is raw bytes or a base64 string."""
    item: dict[str, Any] = {"uri": uri}
    if mime_type is not None:
        item["mimeType"] = mime_type
    item["blob"] = _b64(data)
    return item


def embedded(
    uri: str,
    *,
    text: str | None = None,
    blob: bytes | str | None = None,
    mime_type: str | None = None,
    annotations: Mapping[str, Any] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> EmbeddedResource:
    """A `resource` block embedding a resource's contents; give exactly one of `text`/`blob`."""
    if (text is None) == (blob is None):
        raise ValueError("embedded() needs exactly one of text= or blob=")
    if text is not None:
        resource = resource_text(uri, text, mime_type)
    else:
        resource = resource_blob(uri, blob, mime_type)  # type: ignore[arg-type]
    return _extras({"type": "resource", "resource": resource}, annotations, meta)  # type: ignore[return-value]


def resource_link(
    uri: str,
    name: str,
    *,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    size: int | None = None,
    annotations: Mapping[str, Any] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> ResourceLink:
    """A `resource_link` block pointing at a resource the client may read."""
    block: dict[str, Any] = {"type": "resource_link", "uri": uri, "name": name}
    if title is not None:
        block["title"] = title
    if description is not None:
        block["description"] = description
    if mime_type is not None:
        block["mimeType"] = mime_type
    if size is not None:
        block["size"] = size
    return _extras(block, annotations, meta)  # type: ignore[return-value]


def is_content_block(value: Any) -> TypeGuard[dict[str, Any]]:
    """True for a dict shaped like one of the five ContentBlock kinds."""
    if type(value) is not dict:
        return False
    keys = _REQUIRED_KEYS.get(value.get("type"))  # type: ignore[arg-type]
    return keys is not None and all(k in value for k in keys)


# -- tools ------------------------------------------------------------------------------------


class ToolResult:
    """A complete `CallToolResult` for a handler that wants full control.

    `content` items may be content blocks or plain strings (made text blocks). `structured`
    goes out as `structuredContent` as given (after `to_builtins`); no text copy is added,
    so include one yourself when old clients should see the data.
    """

    __slots__ = ("content", "structured", "is_error", "meta")

    _NOTHING: Any = object()

    def __init__(
        self,
        content: Iterable[Any] | Any = (),
        *,
        structured: Any = _NOTHING,
        is_error: bool = False,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        if isinstance(content, (str, dict)):
            content = [content]
        self.content = list(content)
        self.structured = structured
        self.is_error = is_error
        self.meta = meta

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"content": [as_block(c) for c in self.content]}
        if self.structured is not ToolResult._NOTHING:
            body["structuredContent"] = _builtins(self.structured)
        if self.is_error:
            body["isError"] = True
        if self.meta is not None:
            body["_meta"] = dict(self.meta)
        return body

    def __repr__(self) -> str:
        return f"ToolResult({self.content!r}, is_error={self.is_error})"


class ToolError(Exception):
    """Raise from a tool to answer with an `isError: true` result carrying this message.

    For failures the model can see and correct (bad input, a missing record); a JSON-RPC error
    is for protocol failures and comes from `rondo.McpError`.
    """


def as_block(item: Any) -> dict[str, Any]:
    """A string as a text block; a content block as it is; anything else is a TypeError."""
    if isinstance(item, str):
        return {"type": "text", "text": item}
    if is_content_block(item):
        return item
    raise TypeError(f"not a content block: {item!r:.80}")


def enc_hook(obj: Any) -> Any:
    """msgspec's `enc_hook` for handler values: a pydantic model as its JSON-mode dump."""
    # Pydantic models are the one foreign type handlers commonly return; checked by duck type
    # so pydantic is never imported here.
    dump = getattr(obj, "model_dump", None)
    if dump is not None:
        return dump(mode="json")
    raise TypeError(f"cannot encode {type(obj).__name__} objects as JSON")


def _builtins(value: Any) -> Any:
    return msgspec.to_builtins(value, enc_hook=enc_hook)


# -- prompts ----------------------------------------------------------------------------------


def _message(role: Role, content: Any) -> PromptMessage:
    return {"role": role, "content": as_block(content)}  # type: ignore[typeddict-item]


def user(content: str | Mapping[str, Any]) -> PromptMessage:
    """A `PromptMessage` from the user; `content` is a string or a content block."""
    return _message("user", content)


def assistant(content: str | Mapping[str, Any]) -> PromptMessage:
    """A `PromptMessage` from the assistant; `content` is a string or a content block."""
    return _message("assistant", content)
