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
from .wire.content_types import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    ResourceLink,
    TextContent,
)

__all__ = [
    "AudioContent",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "PromptMessage",
    "ResourceLink",
    "TextContent",
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
