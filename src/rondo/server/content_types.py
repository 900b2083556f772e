"""Names for the content dicts: TypedDicts a tool can be annotated with (`-> ContentBlock`).

Loaded on first use (`rondo.content.TextContent`, ...), not at start-up: building TypedDict
classes costs a stdio server's cold start about 2 ms and answering needs none of them.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

Role = Literal["user", "assistant"]


class TextContent(TypedDict):
    type: Literal["text"]
    text: str
    annotations: NotRequired[dict[str, Any]]
    _meta: NotRequired[dict[str, Any]]


class ImageContent(TypedDict):
    type: Literal["image"]
    data: str
    mimeType: str
    annotations: NotRequired[dict[str, Any]]
    _meta: NotRequired[dict[str, Any]]


class AudioContent(TypedDict):
    type: Literal["audio"]
    data: str
    mimeType: str
    annotations: NotRequired[dict[str, Any]]
    _meta: NotRequired[dict[str, Any]]


class EmbeddedResource(TypedDict):
    type: Literal["resource"]
    resource: dict[str, Any]
    annotations: NotRequired[dict[str, Any]]
    _meta: NotRequired[dict[str, Any]]


class ResourceLink(TypedDict):
    type: Literal["resource_link"]
    uri: str
    name: str
    title: NotRequired[str]
    description: NotRequired[str]
    mimeType: NotRequired[str]
    size: NotRequired[int]
    annotations: NotRequired[dict[str, Any]]
    _meta: NotRequired[dict[str, Any]]


class PromptMessage(TypedDict):
    role: Role
    content: ContentBlock


ContentBlock = TextContent | ImageContent | AudioContent | EmbeddedResource | ResourceLink

# Every name that marks a return annotation as "content, not structured data".
CONTENT_TYPES: frozenset[Any] = frozenset(
    {TextContent, ImageContent, AudioContent, EmbeddedResource, ResourceLink}
)
