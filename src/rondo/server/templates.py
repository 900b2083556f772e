"""Moved to `rondo.wire.uritemplate` (both peers' protocol layer); this path still imports."""

from ..wire.uritemplate import UriTemplate

__all__ = ["UriTemplate"]
