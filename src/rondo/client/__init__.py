"""The rondo client: `Client`, its typed results, its handlers' value types and its errors."""

from __future__ import annotations

from rondo.client.errors import (
    ClientError,
    HttpError,
    InputRequiredError,
    ProtocolError,
    RequestTimeout,
    TransportError,
)
from rondo.client.handlers import ElicitRequest, SampleRequest, form_defaults
from rondo.client.session import Client, Subscription
from rondo.client.types import (
    CallToolResult,
    Completion,
    DiscoverResult,
    GetPromptResult,
    PendingCall,
    Prompt,
    PromptMessage,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Tool,
)
from rondo.kinds import ElicitResult, Root, SamplingResult
from rondo.wire.errors import McpError

__all__ = [
    "CallToolResult",
    "Client",
    "ClientError",
    "Completion",
    "DiscoverResult",
    "ElicitRequest",
    "ElicitResult",
    "GetPromptResult",
    "HttpError",
    "PendingCall",
    "InputRequiredError",
    "McpError",
    "Prompt",
    "PromptMessage",
    "ProtocolError",
    "ReadResourceResult",
    "RequestTimeout",
    "Resource",
    "ResourceTemplate",
    "Root",
    "SampleRequest",
    "SamplingResult",
    "Subscription",
    "Tool",
    "TransportError",
    "form_defaults",
]
