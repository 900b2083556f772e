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
# On a 2025-11-25 back-channel request (`elicitation/create`, ...): the input request key the
# handler asked under (`ctx.ask("name", ...)`), so a bridge to 2026-07-28 can keep it.
INPUT_KEY = "dev.rondo/inputKey"

LOG_LEVELS: tuple[str, ...] = (
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
)
LOG_LEVEL_RANK = {name: rank for rank, name in enumerate(LOG_LEVELS)}

# What the method table says of each method, for the layers below it: which may answer
# `input_required` (MRTR), and the params field each one's `Mcp-Name` header mirrors on
# Streamable HTTP. Never listed here: a `rondo.server.Method` row declares its own facts when
# made (the built-in rows, an extension's), and a client declares the calls it makes.
INPUT_METHODS: set[str] = set()
NAME_FIELDS: dict[str, str] = {}


def declare(method: str, name_field: str | None = None, may_ask: bool = False) -> None:
    """Record what `method`'s row says: its `Mcp-Name` field, and whether it may ask."""
    if name_field is not None:
        NAME_FIELDS[method] = name_field
    if may_ask:
        INPUT_METHODS.add(method)
