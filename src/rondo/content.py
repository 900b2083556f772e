"""Content helpers for tool results, prompt messages and resource contents."""

from .server.content import (
    ToolError,
    ToolResult,
    assistant,
    audio,
    embedded,
    image,
    resource_blob,
    resource_link,
    resource_text,
    text,
    user,
)

__all__ = [
    "ToolError",
    "ToolResult",
    "assistant",
    "audio",
    "embedded",
    "image",
    "resource_blob",
    "resource_link",
    "resource_text",
    "text",
    "user",
]
