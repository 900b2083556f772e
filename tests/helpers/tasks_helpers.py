"""Helpers for the tasks tests: a raw 2026-07-28 peer over the in-memory transport that keeps
one event loop (a task outlives the request that made it), checking every message it sees
against the official schema."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping
from typing import Any

from tests.helpers.helpers_core import ALL_CAPS, check, request  # noqa: E402

TASKS = "io.modelcontextprotocol/tasks"
WITH_TASKS: dict[str, Any] = {**ALL_CAPS, "extensions": {TASKS: {}}}
TERMINAL = ("completed", "failed", "cancelled")


class Peer:
    def __init__(self, server: Any, *, auth: Any = None, caps: Mapping[str, Any] | None = None) -> None:
        from rondo.testing import connect

        self.conn = connect(server, auth=auth)
        self.caps = dict(WITH_TASKS if caps is None else caps)
        self.ids = itertools.count(1)

    async def call(self, method: str, params: Mapping[str, Any] | None = None, *,
                   caps: Mapping[str, Any] | None = None, notes: list[Any] | None = None) -> dict[str, Any]:
        message = request(method, params, id=next(self.ids), caps=self.caps if caps is None else caps)
        seen: list[dict[str, Any]] = [] if notes is None else notes
        response = await self.conn.send(message, on_notification=seen.append)
        assert response is not None
        check(response, method)
        for note in seen:
            check(note)
        return response

    async def result(self, method: str, params: Mapping[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        response = await self.call(method, params, **kw)
        assert "error" not in response, response["error"]
        return response["result"]

    async def error(self, method: str, params: Mapping[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        response = await self.call(method, params, **kw)
        assert "result" not in response, response["result"]
        return response["error"]

    async def tool(self, name: str, arguments: Mapping[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        return await self.result("tools/call", {"name": name, "arguments": dict(arguments or {})}, **kw)

    async def get(self, task_id: str) -> dict[str, Any]:
        return await self.result("tasks/get", {"taskId": task_id})

    async def until(self, task_id: str, *statuses: str, timeout: float = 5.0) -> dict[str, Any]:
        wanted = statuses or TERMINAL
        async with asyncio.timeout(timeout):
            while True:
                task = await self.get(task_id)
                if task["status"] in wanted:
                    return task
                await asyncio.sleep(0.02)


def form(field: str, kind: str = "string") -> dict[str, Any]:
    from rondo import elicit

    return elicit.form(f"{field}?", {"type": "object", "properties": {field: {"type": kind}},
                                     "required": [field]})


def accept(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content}
