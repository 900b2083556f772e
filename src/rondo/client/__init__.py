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
from rondo.client.group import ClientGroup
from rondo.client.handlers import ElicitRequest, SampleRequest, form_defaults
from rondo.client.mcpjson import ConfigError, ServerEntry, load_mcp_json
from rondo.client.session import Client
from rondo.client.subscription import Subscription
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

# Authorization is imported on first use, so a client that never signs in does not pay for it.
_AUTH_NAMES = frozenset({
    "AuthError", "AuthorizationDenied", "ClientCredentials", "DiscoveryError", "EnterpriseAuth",
    "FileTokenStore", "HeadlessRedirect", "InsufficientScope", "JwtBearer", "LoopbackRedirect",
    "MemoryTokenStore", "OAuth",
    "Redirect", "RedirectHandler", "RegistrationError", "Token", "TokenError", "TokenStore",
})


def __getattr__(name: str) -> object:
    if name in _AUTH_NAMES:
        from rondo.client import auth

        return getattr(auth, name)
    raise AttributeError(f"module 'rondo.client' has no attribute {name!r}")

__all__ = [  # plus the authorization names in _AUTH_NAMES, resolved lazily
    "CallToolResult",
    "Client",
    "ClientGroup",
    "ClientError",
    "Completion",
    "ConfigError",
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
    "ServerEntry",
    "SamplingResult",
    "Subscription",
    "Tool",
    "TransportError",
    "form_defaults",
    "load_mcp_json",
]
