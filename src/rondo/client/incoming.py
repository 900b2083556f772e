"""What the server sends the `Client` unasked: its requests (answered from the handlers, the
2025-11-25 back-channel) and its notifications (progress to the request's callback and deadline,
list changes and resource updates to the cache, listen-stream notes to their subscription, every
note to `on_notification`)."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from rondo.client.legacy import answer_server_request
from rondo.client.transports import Json
from rondo.wire.meta import SUBSCRIPTION_ID

if TYPE_CHECKING:
    from .session import Client

LIST_CHANGED = {"notifications/tools/list_changed": "tools/list",
                "notifications/prompts/list_changed": "prompts/list",
                "notifications/resources/list_changed": "resources/list"}


async def on_incoming(client: Client, message: Json) -> Json | None:
    """The answer to a server request, or None once a notification is handled."""
    if message.get("id") is not None:
        return await answer_server_request(client.handlers, message)
    method = message.get("method")
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    assert isinstance(params, dict)
    if method == "notifications/progress" and isinstance(params.get("progressToken"), str | int):
        extend = client._extend.get(params["progressToken"])
        if extend is not None:
            extend()
        callback = client._progress.get(params["progressToken"])
        if callback is not None:
            await maybe_await(callback(params.get("progress", 0), params.get("total"), params.get("message")))
    if method in LIST_CHANGED:
        client.cache.invalidate(LIST_CHANGED[method])
        if method == "notifications/tools/list_changed":
            client.forget_tool_headers()
    elif method == "notifications/resources/updated" and isinstance(params.get("uri"), str):
        client.cache.invalidate("resources/read", params["uri"])
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    sub = client._subscriptions.get((meta or {}).get(SUBSCRIPTION_ID))
    if sub is not None:
        sub._deliver(message)
    elif method == "notifications/cancelled":
        sub = client._subscriptions.get(params.get("requestId"))
        if sub is not None:
            sub._finish()
    if client.on_notification is not None:
        await maybe_await(client.on_notification(message))
    return None


async def maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value
