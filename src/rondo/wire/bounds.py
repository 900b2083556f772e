"""The one nesting bound every incoming message meets, whatever path answers it.

A message may nest objects and arrays at most `MAX_DEPTH` levels, the message itself being level
one (so a tool's arguments get about 125). Deeper input is refused with -32602 before any
middleware, typed decoder or handler sees it: those walk values recursively, and 450-1,000
levels used to overflow them (-32603 and 160 KB of traceback per request through a middleware
chain; an uncaught RecursionError out of the typed lane without one). Beyond about 1,000 levels
the JSON decoder itself gives up (a RecursionError): that body gets the same -32602, without an
id since none could be read (`errors.undecodable`).

The check costs a length test per message, and two byte counts for one over 258 bytes: only a
body holding more than `MAX_DEPTH` opening brackets (in strings or not) can be too deep, and only
such a body is decoded the general way and walked, level by level, without recursion.
"""

from __future__ import annotations

from typing import Any

from .errors import INVALID_PARAMS, McpError

MAX_DEPTH = 128


def may_be_deep(raw: bytes) -> bool:
    """Could this body nest deeper than `MAX_DEPTH`? False for nearly every real message.
    Nesting `MAX_DEPTH + 1` levels takes that many opening and closing brackets, so a shorter
    body is not even counted."""
    return len(raw) > 2 * MAX_DEPTH + 1 and raw.count(b"[") + raw.count(b"{") > MAX_DEPTH


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Does the decoded `value` nest objects and arrays more than `limit` levels?"""
    level = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below: list[Any] = []
        for item in level:
            for child in (item.values() if isinstance(item, dict) else item):
                if isinstance(child, dict | list):
                    below.append(child)
        level = below
    return False


def nesting_error() -> McpError:
    return McpError(INVALID_PARAMS, f"Invalid params: nested deeper than {MAX_DEPTH} levels",
                    {"maxDepth": MAX_DEPTH})
