"""Every page of a list (`tools/list`, `prompts/list`, `resources/list`, templates): pages
cached by cursor, a cursor the server stopped honouring answered by starting over once, and a
pagination that does not end refused."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rondo.client.errors import ProtocolError
from rondo.client.transports import Json
from rondo.wire.errors import INVALID_PARAMS, McpError

if TYPE_CHECKING:
    from .session import Client

MAX_PAGES = 10_000


async def list_all(client: Client, method: str, field: str, refresh: bool) -> list[Json]:
    """The items of every page of `method`'s `field`, from the cache unless `refresh`."""
    items: list[Json] = []
    cursor: str | None = None
    seen: set[str] = set()
    restarted = False
    while True:
        result = None if refresh else client.cache.get(method, cursor)
        if result is None:
            try:
                result = await client.request(method, {} if cursor is None else {"cursor": cursor})
            except McpError as exc:
                # A cursor the server no longer honours: drop every cached page, start over.
                if exc.code == INVALID_PARAMS and cursor is not None and not restarted:
                    restarted = True
                    client.cache.invalidate(method)
                    items, cursor, seen = [], None, set()
                    continue
                raise
            client.cache.put(method, cursor, result)
        page = result.get(field)
        if not isinstance(page, list) or not all(isinstance(i, dict) for i in page):
            raise ProtocolError(f"{method} result has no {field} array")
        items.extend(page)
        cursor = result.get("nextCursor")
        if cursor is None:
            return items
        if not isinstance(cursor, str):
            raise ProtocolError(f"{method} nextCursor must be a string")
        if cursor in seen or len(seen) >= MAX_PAGES:
            raise ProtocolError(f"{method} pagination does not end (cursor {cursor!r} repeats)")
        seen.add(cursor)
