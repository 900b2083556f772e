"""The parent's one instance of a wrap-only extension that several mounted children bring (a
proxy's list freshness and resource watch): each method it wraps runs every member's wrap in
turn, in mounting order, around the parent's row. A member extension opts in with `Chained`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..server.method import Handler, Wrap
from .quiet import Quiet

if TYPE_CHECKING:
    from ..core.core import Core
    from ..server.request import Request


class WrapChain(Quiet):
    """Advertises nothing, adds no rows; its wraps chain its members'."""

    def __init__(self, name: str, template: Any) -> None:
        self.name = name
        self._wrapped = [(w.method, w.suspends) for w in template.wraps()]
        self.members: dict[str, dict[str, Any]] = {}  # namespace -> method -> wrap handler

    def wraps(self) -> Iterable[Wrap]:
        return [Wrap(method, self._chain(method), suspends=suspends)
                for method, suspends in self._wrapped]

    def join(self, namespace: str, member: Any) -> None:
        self.members[namespace] = {w.method: w.handler for w in member.wraps()}

    def leave(self, namespace: str) -> None:
        self.members.pop(namespace, None)

    def _chain(self, method: str) -> Any:
        async def chained(core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
            handler = call_next
            for handlers in list(self.members.values()):
                own = handlers.get(method)
                if own is not None:
                    handler = _around(own, handler)
            return await handler(core, req)

        return chained


def _around(wrap: Any, inner: Handler) -> Handler:
    async def handler(core: Core, req: Request) -> dict[str, Any]:
        result: dict[str, Any] = await wrap(core, req, inner)
        return result

    return handler


class Chained:
    """Mixin: a wrap-only extension a mount carries by chaining (`WrapChain`)."""

    name: str

    def hub(self) -> WrapChain:
        return WrapChain(self.name, self)
