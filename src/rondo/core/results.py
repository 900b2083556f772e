"""Result shaping: whatever a tool, prompt or resource handler returned, as the body of its
`tools/call`, `prompts/get` or `resources/read` result. The kernel's (`core/methods.py`, the
express lane); the helpers users build content with are `rondo.content` (`server/content.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeGuard

import msgspec

from ..server.content import (
    ToolResult,
    as_block,
    enc_hook,
    is_content_block,
    resource_blob,
    resource_text,
)

if TYPE_CHECKING:
    from ..server.schema import Signature


def to_json_text(value: Any) -> str:
    """Compact JSON for a value; objects msgspec cannot encode fall back to `str(value)`."""
    try:
        return msgspec.json.encode(value, enc_hook=enc_hook).decode()
    except (TypeError, msgspec.EncodeError):
        return str(value)


# -- tools ------------------------------------------------------------------------------------


def error_result(message: str) -> dict[str, Any]:
    """The `CallToolResult` body for a tool-level error (`ToolError`, invalid arguments)."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


def tool_result(value: Any, signature: Signature) -> dict[str, Any]:
    """Shape a tool's return value into a `CallToolResult` body (no `resultType`).

    `ToolResult` → as given; with an output schema → `structuredContent` plus its JSON as text;
    str → a text block; a content block, or a list of blocks and strings → `content`;
    None → no content; bytes → an error result (say what they are with `image`/`audio`/
    `embedded`); anything else → a text block with its JSON.
    """
    if type(value) is str and signature.output_schema is None:
        return {"content": [{"type": "text", "text": value}]}  # the commonest answer, first
    if isinstance(value, ToolResult):
        return value.to_dict()
    if signature.output_schema is not None:
        structured = signature.structure_output(value)
        return {
            "content": [{"type": "text", "text": msgspec.json.encode(structured).decode()}],
            "structuredContent": structured,
        }
    if isinstance(value, str):
        return {"content": [{"type": "text", "text": value}]}
    if value is None:
        return {"content": []}
    if is_content_block(value):
        return {"content": [value]}
    if isinstance(value, (list, tuple)) and all(
        isinstance(v, str) or is_content_block(v) for v in value
    ):
        return {"content": [as_block(v) for v in value]}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return error_result(
            "tool returned raw bytes; wrap them with rondo.image(), rondo.audio() or rondo.embedded()"
        )
    return {"content": [{"type": "text", "text": to_json_text(value)}]}


def _one_message(item: Any) -> dict[str, Any]:
    if isinstance(item, str) or is_content_block(item):
        return {"role": "user", "content": as_block(item)}
    if type(item) is dict and "role" in item and "content" in item:
        if item["role"] not in ("user", "assistant"):
            raise TypeError(
                f"prompt message role must be 'user' or 'assistant', got {item['role']!r}"
            )
        if isinstance(item["content"], str):
            return {**item, "content": {"type": "text", "text": item["content"]}}
        return item
    raise TypeError(f"a prompt must return strings, messages or content blocks, got {item!r:.80}")


def prompt_messages(value: Any) -> list[dict[str, Any]]:
    """Shape a prompt's return value into `GetPromptResult.messages`.

    A string or a content block becomes one user message; a message dict passes through (a
    string `content` is made a text block); a list holds any of these.
    """
    if isinstance(value, (list, tuple)):
        return [_one_message(v) for v in value]
    if value is None:
        return []
    return [_one_message(value)]


# -- resources --------------------------------------------------------------------------------


def _is_contents(item: Any) -> TypeGuard[dict[str, Any]]:
    return type(item) is dict and "uri" in item and ("text" in item or "blob" in item)


def _one_contents(item: Any, uri: str, mime_type: str | None) -> dict[str, Any]:
    if isinstance(item, str):
        return resource_text(uri, item, mime_type)
    if isinstance(item, (bytes, bytearray, memoryview)):
        return resource_blob(uri, bytes(item), mime_type)
    if _is_contents(item):
        return item
    # Structured data (dict, dataclass, Struct, model): served as JSON text.
    return resource_text(uri, to_json_text(item), mime_type or "application/json")


def resource_contents(value: Any, uri: str, mime_type: str | None = None) -> list[dict[str, Any]]:
    """Shape a resource handler's return value into `ReadResourceResult.contents`.

    str → text; bytes → base64 blob; a `{"uri", "text"|"blob"}` dict passes through; a list
    gives one item per element; other data is served as JSON text (`application/json` unless
    `mime_type` says otherwise). None is an error: a read never answers with empty contents.
    """
    if value is None:
        raise TypeError(f"resource handler for {uri} returned None")
    if isinstance(value, (list, tuple)):
        if value and all(
            isinstance(v, (str, bytes, bytearray, memoryview)) or _is_contents(v) for v in value
        ):
            return [_one_contents(v, uri, mime_type) for v in value]
        return [resource_text(uri, to_json_text(value), mime_type or "application/json")]
    return [_one_contents(value, uri, mime_type)]
