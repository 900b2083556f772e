"""The one era detector: is a message 2026-07-28 (per-request `_meta`) or handshake-era?

Every transport and the client ask these, never their own copy. The rule (conformance
contract §4.1): a message carrying the modern `_meta` protocol version is modern; a legacy
`initialize` or anything on a 2025-era session is legacy; over HTTP, a session id or a
handshake-era `MCP-Protocol-Version` header with no modern `_meta` is legacy too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .meta import HANDSHAKE_VERSIONS, PROTOCOL_VERSION

MODERN = "modern"
LEGACY = "legacy"


def has_modern_meta(msg: Mapping[str, Any]) -> bool:
    """Does this message carry the 2026-07-28 per-request `_meta` protocol version?"""
    params = msg.get("params")
    if type(params) is not dict and not isinstance(params, dict):
        return False
    meta = params.get("_meta")
    return (type(meta) is dict or isinstance(meta, dict)) and PROTOCOL_VERSION in meta


def is_legacy_start(msg: Mapping[str, Any]) -> bool:
    """Is this a handshake-era `initialize` (no modern per-request `_meta`)?"""
    return msg.get("method") == "initialize" and not has_modern_meta(msg)


def pipe_era(msg: Mapping[str, Any], in_session: bool) -> str:
    """The era of a message on an ordered pipe (stdio, memory), given whether a legacy
    session is already open on it."""
    if in_session:
        return MODERN if has_modern_meta(msg) else LEGACY
    return LEGACY if is_legacy_start(msg) else MODERN


def http_era(msg: Mapping[str, Any], session_id: str | None, version_header: str | None) -> str:
    """The era of one HTTP POST body, from its `_meta` and its session/version headers."""
    if session_id is not None:
        return LEGACY
    if has_modern_meta(msg):
        return MODERN
    if version_header is not None:
        return LEGACY if version_header.strip() in HANDSHAKE_VERSIONS else MODERN
    return LEGACY


def sent_legacy(msg: Mapping[str, Any]) -> bool:
    """Client side: is a message we send handshake-era (no modern `_meta`)?"""
    return not has_modern_meta(msg)
