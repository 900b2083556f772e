"""The per-request `_meta` envelope every 2026-07-28 request carries, and its checks.

A 2025-11-25 session fills the same fields from what the client declared at `initialize`
(`server/legacy.py` builds one per session), so everything above this reads one shape whichever
the era.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from .errors import UNSUPPORTED_VERSION, McpError, invalid_params
from .meta import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LOG_LEVEL,
    LOG_LEVEL_RANK,
    MODERN_VERSIONS,
    PROTOCOL_VERSION,
)


class Envelope(msgspec.Struct):
    """Protocol version, client capabilities, client info and log level of one request.

    A Struct: built in C, with no Python `__init__` frame per request."""

    meta: dict[str, Any]
    version: str
    capabilities: dict[str, Any]
    client_info: dict[str, Any] | None
    log_level: str | None


def envelope(params: Mapping[str, Any]) -> Envelope:
    """Check the required `_meta` fields (-32602 when missing or mistyped)."""
    # `type(x) is T` first: decoded JSON is exactly dict and str, and that test is the cheaper.
    meta = params.get("_meta")
    if type(meta) is not dict and not isinstance(meta, dict):
        raise invalid_params("Missing required _meta (protocol version and client capabilities)")
    version = meta.get(PROTOCOL_VERSION)
    if type(version) is not str and not isinstance(version, str):
        raise invalid_params(f"Missing required _meta field {PROTOCOL_VERSION}")
    caps = meta.get(CLIENT_CAPABILITIES)
    if type(caps) is not dict and not isinstance(caps, dict):
        raise invalid_params(f"Missing required _meta field {CLIENT_CAPABILITIES}")
    info = meta.get(CLIENT_INFO)
    if info is not None and type(info) is not dict and not isinstance(info, dict):
        raise invalid_params(f"{CLIENT_INFO} must be an object")
    level = meta.get(LOG_LEVEL)
    if level is not None and (not isinstance(level, str) or level not in LOG_LEVEL_RANK):
        raise invalid_params(f"Unknown log level {level!r}")
    return Envelope(meta, version, caps, info, level)


def check_version(env: Envelope, supported: tuple[str, ...] = MODERN_VERSIONS) -> None:
    if env.version not in supported:
        raise McpError(
            UNSUPPORTED_VERSION,
            "Unsupported protocol version",
            {"supported": list(supported), "requested": env.version},
        )
