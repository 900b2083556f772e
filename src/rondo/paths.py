"""Turn a URI template value into a file path that cannot leave its base directory.

A reserved `{+path}` variable may span segments, and RFC 6570 lets it hold anything: the URI
`tree:///data//etc/passwd` (or `tree:///data/%2fetc%2fpasswd`) hands the handler `/etc/passwd`,
and `os.path.join(base, "/etc/passwd")` is `/etc/passwd`. `inside(base, value)` is the one
place a handler should turn such a value into a path:

    @server.resource("tree:///data/{+path}")
    def read(path: str) -> bytes:
        return rondo.paths.inside(DATA, path).read_bytes()

It refuses (with `PathRefused`, answered to the client as -32602 "Resource not found") a value
that is empty, absolute (`/x`, `\\x`), carries a drive or stream (`C:\\x`, `C:x`, `a:b`), holds a
`..` segment (with `/` or `\\` as separator), a control character (NUL included), or is longer
than `max_length` characters or has a segment over 255 UTF-8 bytes. The value is checked as
given: the template has already percent-decoded it once, and it is not decoded again (a file
literally named `%2e%2e` is harmless). Last, the resolved path (symbolic links followed) must
still be under the resolved base, so a link inside the base cannot lead out of it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .wire.errors import INVALID_PARAMS, McpError

__all__ = ["PathRefused", "inside", "MAX_LENGTH"]

MAX_LENGTH = 1024
_SEGMENT_BYTES = 255
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class PathRefused(McpError):
    """A value that would leave its base: answered -32602 "Resource not found" (the reason is
    in `.reason` for the server's own log; the client is not told which rule it broke)."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        super().__init__(INVALID_PARAMS, "Resource not found")
        self.reason = reason

    def __str__(self) -> str:
        return f"path refused: {self.reason}"


def inside(base: str | os.PathLike[str], value: str, *, max_length: int = MAX_LENGTH) -> Path:
    """The path `value` names below `base`, or `PathRefused` when it would name anything else."""
    if not value:
        raise PathRefused("empty")
    if len(value) > max_length:
        raise PathRefused(f"longer than {max_length} characters")
    if _CONTROL.search(value):
        raise PathRefused("control character")
    if value[0] in "/\\":
        raise PathRefused("absolute")
    if ":" in value:
        raise PathRefused("drive or stream (':')")
    segments = value.replace("\\", "/").split("/")
    for segment in segments:
        if segment == "..":
            raise PathRefused("'..' segment")
        if len(segment.encode("utf-8", "surrogatepass")) > _SEGMENT_BYTES:
            raise PathRefused(f"segment longer than {_SEGMENT_BYTES} bytes")
    root = Path(base).resolve()
    target = root.joinpath(*(s for s in segments if s and s != ".")).resolve()
    if target != root and root not in target.parents:
        raise PathRefused("resolves outside the base (symbolic link)")
    return target
