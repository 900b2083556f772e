"""The client side of the events extension (experimental; `rondo.events` on the server).

    events = EventsClient(client)
    cursor = (await events.poll("order.shipped", {"customer": "ada"}))["cursor"]   # from now
    page = await events.poll("order.shipped", {"customer": "ada"}, cursor=cursor)

`stream(name, arguments)` holds an `events/stream` open (`async with ... as s: async for
occurrence in s`). `subscribe` registers a webhook with a fresh `whsec_` secret (`new_secret()`; the server never
makes one) and returns the server's answer with the secret the receiver must verify with
(`rondo.events.verify(secret, headers, raw_body)`).
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .errors import ClientError, ProtocolError
from .subscription import Subscription
from .transports import Json

if TYPE_CHECKING:
    from .session import Client

EXTENSION = "io.modelcontextprotocol/events"


def new_secret(size: int = 32) -> str:
    """A Standard Webhooks secret: `whsec_` and base64 of `size` (24-64) random bytes."""
    if not 24 <= size <= 64:
        raise ValueError("a webhook secret carries 24 to 64 bytes")
    return "whsec_" + base64.b64encode(secrets.token_bytes(size)).decode()


class EventsClient:
    """Events of one connected server: list, poll, and webhook subscriptions."""

    def __init__(self, client: Client) -> None:
        self._client = client

    async def list_events(self) -> list[dict[str, Any]]:
        result = await self._client.request("events/list", {})
        found = result.get("events")
        if not isinstance(found, list):
            raise ProtocolError("events/list result has no events array")
        return found

    async def poll(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                   cursor: str | None = None, max_events: int | None = None,
                   max_age_ms: int | None = None) -> dict[str, Any]:
        """One `events/poll`: `{events, cursor, truncated, hasMore, nextPollMs}`. Keep the
        cursor and pass it back; `cursor=None` starts from now."""
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments or {}), "cursor": cursor}
        if max_events is not None:
            params["maxEvents"] = max_events
        if max_age_ms is not None:
            params["maxAgeMs"] = max_age_ms
        result = await self._client.request("events/poll", params)
        if not isinstance(result.get("events"), list) or "cursor" not in result:
            raise ProtocolError("events/poll result lacks events or cursor")
        return result

    async def drain(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                    cursor: str, max_pages: int = 100) -> tuple[list[dict[str, Any]], str, bool]:
        """Poll until `hasMore` is false: (events, last cursor, truncated anywhere)."""
        found: list[dict[str, Any]] = []
        truncated = False
        for _ in range(max_pages):
            page = await self.poll(name, arguments, cursor=cursor)
            found += page["events"]
            cursor = page["cursor"]
            truncated = truncated or bool(page.get("truncated"))
            if not page.get("hasMore"):
                break
        return found, cursor, truncated

    async def subscribe(self, name: str, arguments: Mapping[str, Any] | None, url: str, *,
                        secret: str | None = None, cursor: str | None = None,
                        ttl_ms: int | None = None) -> dict[str, Any]:
        """Register (or refresh) a webhook; the answer plus `"secret"`: what the receiver at
        `url` verifies deliveries with. Refresh before `refreshBefore` with the same secret."""
        secret = secret or new_secret()
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments or {}),
                                  "delivery": {"mode": "webhook", "url": url, "secret": secret},
                                  "cursor": cursor}
        if ttl_ms is not None:
            params["ttlMs"] = ttl_ms
        result = await self._client.request("events/subscribe", params)
        if not isinstance(result.get("id"), str):
            raise ProtocolError("events/subscribe result has no id")
        return {**result, "secret": secret}

    def stream(self, name: str, arguments: Mapping[str, Any] | None = None, *,
               cursor: str | None = None) -> EventStream:
        """A push stream of occurrences (`events/stream`), from `cursor` or from now."""
        return EventStream(self._client, name, arguments or {}, cursor)

    async def unsubscribe(self, name: str, arguments: Mapping[str, Any] | None, url: str) -> None:
        await self._client.request("events/unsubscribe", {"name": name,
                                                          "arguments": dict(arguments or {}),
                                                          "delivery": {"url": url}})


class EventStream(Subscription):
    """One `events/stream` request (2026-07-28): `async with events.stream(name, args) as s:`
    then `async for occurrence in s:`. `cursor` follows every event and heartbeat (persist it
    and pass it back to resume); `truncated` is true if the server skipped occurrences."""

    def __init__(self, client: Client, name: str, arguments: Mapping[str, Any],
                 cursor: str | None) -> None:
        super().__init__(client, {})
        self.params: dict[str, Any] = {"name": name, "arguments": dict(arguments), "cursor": cursor}
        self.cursor = cursor
        self.truncated = False

    async def __aenter__(self) -> EventStream:
        if self.client.era != "modern":
            raise ClientError("events/stream from rondo.Client needs a 2026-07-28 server (poll instead)")
        await self._open("events/stream", self.params, "confirm")
        return self

    def _deliver(self, message: Json) -> None:
        method = message.get("method")
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        assert isinstance(params, dict)
        if "cursor" in params:
            self.cursor = params["cursor"]
        if method == "notifications/events/active":
            self.truncated = self.truncated or params.get("truncated") is True
            self.acknowledged = params
            self._acked.set()
        elif method == "notifications/events/event":
            self._queue.put_nowait({k: v for k, v in params.items() if k != "_meta"})
