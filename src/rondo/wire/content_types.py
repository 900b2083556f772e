"""Names for the content dicts: TypedDicts a tool can be annotated with (`-> ContentBlock`).

Loaded on first use (`rondo.content.TextContent`, ...), not at start-up: building TypedDict
classes costs a stdio server's cold start about 2 ms and answering needs none of them.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

Role = Literal["user", "assistant"]


class _Block(TypedDict):
    """What every content block may carry besides its own keys."""

    annotations: NotRequired[dict[str, Any]]
    _meta: NotRequired[dict[str, Any]]


class TextContent(_Block):
    type: Literal["text"]
    text: str


class ImageContent(_Block):
    type: Literal["image"]
    data: str
    mimeType: str


class AudioContent(_Block):
    type: Literal["audio"]
    data: str
    mimeType: str


class EmbeddedResource(_Block):
    type: Literal["resource"]
    resource: dict[str, Any]


class ResourceLink(_Block):
    type: Literal["resource_link"]
    uri: str
    name: str
    title: NotRequired[str]
    description: NotRequired[str]
    mimeType: NotRequired[str]
    size: NotRequired[int]


class PromptMessage(TypedDict):
    role: Role
    content: ContentBlock


ContentBlock = TextContent | ImageContent | AudioContent | EmbeddedResource | ResourceLink

# Every name that marks a return annotation as "content, not structured data".
CONTENT_TYPES: frozenset[Any] = frozenset(
    {TextContent, ImageContent, AudioContent, EmbeddedResource, ResourceLink}
)
