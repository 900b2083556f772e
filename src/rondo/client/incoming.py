"""What the server sends the `Client` unasked: its requests (answered from the handlers, the
2025-11-25 back-channel) and its notifications (progress to the request's callback and deadline,
list changes and resource updates to the cache, listen-stream notes to their subscription, every
note to `on_notification`). A server that cancels a request of its own this client is answering
(`notifications/cancelled` naming its id: it gave up on the question) ends that answer: the
handler is cancelled and nothing is sent back (each transport answers in a task of its own)."""

from __future__ import annotations

import asyncio
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
    rid = message.get("id")
    if rid is not None:
        answering = client._answering
        task = answering.start(rid)
        try:
            return await answer_server_request(client.handlers, message)
        finally:
            answering.end(rid, task)
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
        client._answering.cancel(params.get("requestId"))
    if client.on_notification is not None:
        await maybe_await(client.on_notification(message))
    return None


class Answering:
    """The server's requests a client is answering, by id: the task answering each, so the
    server's `notifications/cancelled` for one ends it."""

    __slots__ = ("tasks",)

    def __init__(self) -> None:
        self.tasks: dict[Any, asyncio.Task[Any]] = {}

    def start(self, rid: Any) -> asyncio.Task[Any] | None:
        """The current task answers `rid` (None: not trackable, a reused id or one no
        cancellation can name: answered as is)."""
        task = asyncio.current_task()
        if task is None or not isinstance(rid, str | int) or rid in self.tasks:
            return None
        self.tasks[rid] = task
        return task

    def end(self, rid: Any, task: asyncio.Task[Any] | None) -> None:
        if task is not None and self.tasks.get(rid) is task:
            del self.tasks[rid]

    def cancel(self, rid: Any) -> None:
        task = self.tasks.get(rid) if isinstance(rid, str | int) else None
        if task is not None and task is not asyncio.current_task():
            task.cancel()


async def maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value
