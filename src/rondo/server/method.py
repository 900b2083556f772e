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
from ..wire.meta import declare

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

    __slots__ = ("name", "handler", "eras", "gate", "suspends", "name_field", "may_ask", "scopes")

    def __init__(
        self,
        name: str,
        handler: Handler,
        eras: frozenset[str] = BOTH,
        gate: str | None = None,
        suspends: Callable[[Core, Mapping[str, Any]], bool] | None = None,
        *,
        name_field: str | None = None,
        may_ask: bool = False,
        scopes: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.handler = handler
        self.eras = eras
        self.gate = gate
        self.suspends = suspends
        # The params field its `Mcp-Name` header mirrors (HTTP checks the two agree).
        self.name_field = name_field
        # May it answer `input_required` (the MRTR round)?
        self.may_ask = may_ask
        # OAuth scopes a caller needs for it, beyond the server-wide ones (`rondo.auth`).
        self.scopes = scopes
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("a method needs a non-empty name")
        if not self.eras or not self.eras <= BOTH:
            raise ValueError(f"method {self.name!r}: eras must be a subset of {sorted(BOTH)}")
        if not callable(self.handler):
            raise TypeError(f"method {self.name!r}: handler must be an async callable")
        declare(name, name_field, may_ask)  # what the layers below the table read

    def __repr__(self) -> str:
        return f"Method({self.name!r}, eras={sorted(self.eras)}, gate={self.gate!r})"


WrapHandler = Callable[["Core", "Request", Handler], Awaitable[dict[str, Any]]]


class Wrap:
    """An extension's interceptor around a method of the table (a built-in one, most often):
    `handler(core, request, call_next)`, where `call_next(core, request)` answers as the row it
    wraps would. The row keeps its era, gate, name field, `may_ask` and scopes.

    For `tools/call`, `tools(tool) -> bool` says which tools it takes: the handler sees only
    their calls, and every other tool keeps the express and typed lanes (None: it takes every
    call, and those lanes are off).
    `suspends(core, params)` says whether it may wait where the wrapped row would not."""

    __slots__ = ("method", "handler", "tools", "suspends")

    def __init__(
        self,
        method: str,
        handler: WrapHandler,
        *,
        tools: Callable[[Any], bool] | None = None,
        suspends: Callable[[Core, Mapping[str, Any]], bool] | None = None,
    ) -> None:
        if not isinstance(method, str) or not method:
            raise ValueError("a wrap needs the name of the method it wraps")
        if not callable(handler):
            raise TypeError(f"wrap of {method!r}: handler must be an async callable")
        self.method = method
        self.handler = handler
        self.tools = tools
        self.suspends = suspends

    def around(self, row: Method) -> Method:
        """The row this wrap makes of `row`."""
        inner, wrap, takes = row.handler, self.handler, self.tools

        async def handler(core: Core, req: Request) -> dict[str, Any]:
            if takes is not None:  # only its tools, on this path as on the fast lanes
                name = req.params.get("name")
                tool = core.server.tools.get(name) if isinstance(name, str) else None
                if tool is None or not takes(tool):
                    return await inner(core, req)
            return await wrap(core, req, inner)

        mine, theirs = self.suspends, row.suspends
        suspends = mine or theirs
        if mine is not None and theirs is not None:
            def suspends(core: Core, params: Mapping[str, Any]) -> bool:
                return mine(core, params) or theirs(core, params)

        return Method(row.name, handler, row.eras, row.gate, suspends, name_field=row.name_field,
                      may_ask=row.may_ask, scopes=row.scopes)

    def __repr__(self) -> str:
        return f"Wrap({self.method!r})"


def era_set(era: str | tuple[str, ...] | frozenset[str]) -> frozenset[str]:
    """`"both"`, `"modern"`, `"legacy"` or a collection of those, as a frozenset of eras."""
    if era == "both":
        return BOTH
    if isinstance(era, str):
        return frozenset({era})
    return frozenset(era)
