"""Protocol versions, eras and the reserved `_meta` keys."""

from __future__ import annotations

MODERN_VERSION = "2026-07-28"
MODERN_VERSIONS: tuple[str, ...] = (MODERN_VERSION,)
# Handshake-era versions, newest first; a legacy client asking for anything else is answered
# with the newest one we speak.
LEGACY_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
HANDSHAKE_VERSIONS = frozenset(LEGACY_VERSIONS)

PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
PROGRESS_TOKEN = "progressToken"

LOG_LEVELS: tuple[str, ...] = (
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
)
LOG_LEVEL_RANK = {name: rank for rank, name in enumerate(LOG_LEVELS)}

# The three methods that may answer `input_required` (MRTR), and the body field each one's
# `Mcp-Name` header mirrors on Streamable HTTP (the tasks extension adds its three methods).
INPUT_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
NAME_FIELDS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
               "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}
