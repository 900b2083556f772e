"""The public face, pinned: each public module's `__all__` is exactly the names below, every one
of them resolves (lazy exports included), none is listed twice, and a class or function a public
module defines under a public name is exported or renamed private. Changing the public face
means changing this file, on purpose."""

from __future__ import annotations

import importlib
import inspect

import pytest

PUBLIC = {
    "rondo": {"Client", "Context", "InputRequired", "McpError", "Server", "StatePolicy",
        "ToolError", "ToolResult", "auth", "content", "elicit", "gateway", "kinds", "legacy",
        "middleware", "paths", "proxy", "roots", "sampling", "state", "tasks", "testing"},
    "rondo.apps": {"EXTENSION", "LEGACY_RESOURCE_URI", "MAX_BYTES", "MIME_TYPE", "Apps",
        "AppsError", "Csp", "Permissions", "ToolLink", "View", "ViewMeta", "page", "supports", "tool_visibility"},
    "rondo.auth": {"ExchangeRefused", "ExchangeUnavailable", "ExchangedToken",
        "IntrospectionVerifier", "InvalidToken", "JwtVerifier", "Principal", "ResourceServer",
        "TokenExchange", "TokenExchangeError", "TokenVerifier", "VerifierUnavailable",
        "principal_of"},
    "rondo.cli": {"load_server", "main"},
    "rondo.client": {"CallToolResult", "Client", "ClientError", "ClientGroup", "Completion",
        "ConfigError", "DiscoverResult", "ServerEntry", "load_mcp_json",
        "ElicitRequest", "ElicitResult", "GetPromptResult", "HttpError", "InputRequiredError",
        "McpError", "PendingCall", "Prompt", "PromptMessage", "ProtocolError",
        "ReadResourceResult", "RequestTimeout", "Resource", "ResourceTemplate", "Root",
        "SampleRequest", "SamplingResult", "Subscription", "Tool", "TransportError",
        "form_defaults"},
    "rondo.content": {"AudioContent", "ContentBlock", "EmbeddedResource", "ImageContent",
        "PromptMessage", "ResourceLink", "TextContent", "ToolError", "ToolResult", "assistant",
        "audio", "embedded", "image", "resource_blob", "resource_link", "resource_text", "text",
        "user"},
    "rondo.elicit": {"ElicitResult", "MISSING", "form", "response", "url"},
    "rondo.gateway": {"Hold", "Mount", "Replay", "Restart", "SEPARATOR", "from_mcp_json", "mount",
        "proxy", "tags"},
    "rondo.kinds": {"ElicitRequest", "ElicitResult", "KINDS", "Kind", "MISSING", "NotDeclared",
        "Root", "RootList", "SampleRequest", "SamplingResult", "form_defaults", "kind_for",
        "merge_capabilities", "missing_capabilities", "response"},
    "rondo.legacy": {"AskError", "AskRejected", "AskTimeout", "ClientCannotAnswer",
        "ClientRefused", "LegacyConfig", "close_stream"},
    "rondo.middleware": {"CallNext", "MaskErrors", "Middleware", "RATE_LIMITED", "RateLimit",
        "RequestLog", "RequestView", "loggable"},
    "rondo.openapi": {"OpenAPIError", "Operation", "OperationSkipped", "Route", "from_fastapi",
        "from_openapi"},
    "rondo.paths": {"MAX_LENGTH", "PathRefused", "inside"},
    "rondo.roots": {"MISSING", "Root", "RootList", "list", "response"},
    "rondo.sampling": {"MISSING", "SamplingResult", "create_message", "response"},
    "rondo.server": {"Method", "Request", "Wrap"},
    "rondo.state": {"DEFAULT_TTL", "ENV_KEYS", "Keyring", "MAX_TOKEN_CHARS", "MAX_TTL",
        "MemoryReplayStore", "REJECTED_MESSAGE", "RedisReplayStore", "ReplayStore",
        "StatePolicy", "UNBOUND_PARAMS", "new_secret_text", "open", "parse_env_keys", "seal"},
    "rondo.tasks": {"EXTENSION", "MemoryTaskStore", "RedisTaskStore", "TaskCancelled",
        "TaskFailed", "TaskHandle", "TaskRecord", "TaskStore", "TaskWasCancelled", "Tasks",
        "TasksClient", "declares_tasks"},
    "rondo.testing": {"MemoryConnection", "connect", "principal"},
    "rondo.transport.http": {"DEFAULT_MAX_BODY", "DEFAULT_MAX_PENDING", "HttpApp",
        "KEEPALIVE_SECONDS", "LOOPBACK_HOSTS", "serve"},
    "rondo.transport.limits": {"HttpLimits", "uvicorn_options"},
    "rondo.transport.serve": {"HttpLimits", "SERVE_OPTIONS", "serve", "uvicorn_options"},
    "rondo.userstate": {"ABSENT", "FileStore", "MemoryStore", "NAME", "NoPrincipal",
        "RedisStore", "StateTooLarge", "StoreUnavailable", "SyncUserStateView", "UserState",
        "UserStateError", "UserStateStore", "UserStateView"},
}


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_all_is_the_pinned_public_face(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert len(exported) == len(set(exported)), f"{name}.__all__ lists a name twice"
    assert set(exported) == PUBLIC[name]


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_every_exported_name_resolves(name: str) -> None:
    module = importlib.import_module(name)
    missing = [member for member in module.__all__ if not hasattr(module, member)]
    assert missing == []


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_what_a_public_module_defines_publicly_is_exported(name: str) -> None:
    module = importlib.import_module(name)
    unlisted = [
        member for member, value in vars(module).items()
        if not member.startswith("_") and (inspect.isclass(value) or inspect.isfunction(value))
        and value.__module__ == name and member not in module.__all__
    ]
    assert unlisted == []


def test_the_checks_see_a_stray_public_helper_and_a_doubled_name(monkeypatch: pytest.MonkeyPatch) -> None:
    # A referee that cannot fail is none: plant each fault in a real module and see it caught.
    cli = importlib.import_module("rondo.cli")

    def helper() -> None: ...

    helper.__module__ = "rondo.cli"
    monkeypatch.setattr(cli, "helper", helper, raising=False)
    with pytest.raises(AssertionError, match="helper"):
        test_what_a_public_module_defines_publicly_is_exported("rondo.cli")
    monkeypatch.setattr(cli, "__all__", [*cli.__all__, "main"])
    with pytest.raises(AssertionError, match="lists a name twice"):
        test_all_is_the_pinned_public_face("rondo.cli")
