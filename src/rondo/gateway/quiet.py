"""`Quiet`, the base of the gateway's own extensions: they wrap methods or pass hooks on, and
advertise nothing and add no method rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..server.server import Server


class Quiet:
    """An extension that advertises nothing and adds no methods."""

    def capability(self, server: Server) -> None:
        return None

    def methods(self) -> tuple[()]:
        return ()
