"""A row of the method table: one JSON-RPC method a server answers, declared once.

A `Method` names its era(s), the server capability that gates it (not advertised -> -32601),
its handler `async (core, request) -> result dict`, and whether answering it can wait on
something (`suspends`). The built-in rows live in `rondo.core.methods`; extensions and
`Server.method` add rows; dispatch never changes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..wire.era import LEGACY, MODERN

if TYPE_CHECKING:
    from ..core.core import Core
    from .request import Request

Handler = Callable[["Core", "Request"], Awaitable[dict[str, Any]]]
BOTH = frozenset({MODERN, LEGACY})


class Method:
    """One row of the table. `suspends(core, params)` says whether answering may await
    something (an async handler, a stream); transports answer the others inline.

    A plain slotted class, not a dataclass: building the table is on a stdio server's cold
    start, and dataclass creation costs milliseconds there."""

    __slots__ = ("name", "handler", "eras", "gate", "suspends")

    def __init__(
        self,
        name: str,
        handler: Handler,
        eras: frozenset[str] = BOTH,
        gate: str | None = None,
        suspends: Callable[[Core, Mapping[str, Any]], bool] | None = None,
    ) -> None:
        self.name = name
        self.handler = handler
        self.eras = eras
        self.gate = gate
        self.suspends = suspends
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("a method needs a non-empty name")
        if not self.eras or not self.eras <= BOTH:
            raise ValueError(f"method {self.name!r}: eras must be a subset of {sorted(BOTH)}")
        if not callable(self.handler):
            raise TypeError(f"method {self.name!r}: handler must be an async callable")

    def __repr__(self) -> str:
        return f"Method({self.name!r}, eras={sorted(self.eras)}, gate={self.gate!r})"


def era_set(era: str | tuple[str, ...] | frozenset[str]) -> frozenset[str]:
    """`"both"`, `"modern"`, `"legacy"` or a collection of those, as a frozenset of eras."""
    if era == "both":
        return BOTH
    if isinstance(era, str):
        return frozenset({era})
    return frozenset(era)
