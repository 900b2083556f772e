"""A hostile upstream: a real rondo server on loopback HTTP whose `tools/call` of some tool
names is answered by a wrapper that misbehaves (garbage, a huge or endless body, silence, a
flood of notifications, an HTTP 500 full of internal addresses), and one real tool that asks
for input forever. Lists, discovery and the other tools are the real server's."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import rondo
from rondo import InputRequired, elicit
from tests.helpers.asgi_body import read_body, replaying

INTERNAL = "http://10.9.8.7:5432/internal-db?token=hostile-secret"
ASK = elicit.form("Again?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
HOSTILE = ("garbage", "not_rpc", "huge", "endless_body", "silent", "flood", "flood_forever",
           "leaky_500", "wrong_id")
SERVED: dict[str, int] = {}  # bytes the endless answers sent, by tool


def hostile_server() -> rondo.Server:
    up = rondo.Server("hostile")
    for name in HOSTILE:
        def placeholder() -> str:
            return "never reached: the wrapper answers"

        up.tool(name=name, description=f"Misbehaves: {name}.")(placeholder)

    @up.tool
    def endless(ctx: rondo.Context) -> object:
        """Answers input_required on every round, forever."""
        return InputRequired({"again": ASK}, state={"round": (ctx.state or {}).get("round", 0) + 1})

    @up.tool
    def fine() -> str:
        """Behaves."""
        return "fine"

    return up


class Hostile:
    """ASGI wrapper: `tools/call` of a HOSTILE tool gets that tool's misbehaviour."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.gone = asyncio.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = await read_body(receive)
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        name = (request.get("params") or {}).get("name") if isinstance(request, dict) and \
            request.get("method") == "tools/call" else None
        if name not in HOSTILE:
            await self.app(scope, replaying(body, receive), send)
            return
        gone = asyncio.Event()

        async def watch() -> None:  # http.disconnect once the client hangs up
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        watcher = asyncio.create_task(watch())
        self.gone = gone
        try:
            await getattr(self, name)(request, send)
        finally:
            watcher.cancel()

    @staticmethod
    async def _start(send: Any, status: int = 200, ctype: bytes = b"application/json") -> None:
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", ctype)]})

    async def garbage(self, request: Any, send: Any) -> None:
        await self._start(send)
        await send({"type": "http.response.body", "body": b"{\x00 this is not JSON ]]"})

    async def not_rpc(self, request: Any, send: Any) -> None:
        await self._start(send)
        await send({"type": "http.response.body", "body": b'[1, 2, {"result": 3}]'})

    async def wrong_id(self, request: Any, send: Any) -> None:
        await self._start(send)
        await send({"type": "http.response.body", "body": json.dumps(
            {"jsonrpc": "2.0", "id": "someone-else", "result": {"content": []}}).encode()})

    async def leaky_500(self, request: Any, send: Any) -> None:
        await self._start(send, 500, b"text/plain")
        await send({"type": "http.response.body",
                    "body": f"Traceback: cannot reach {INTERNAL}".encode()})

    async def huge(self, request: Any, send: Any) -> None:
        # 100 MiB of one JSON string, sent in 1 MiB chunks.
        await self._start(send)
        await self._chunks(send, "huge", b'{"jsonrpc": "2.0", "id": 1, "result": "', 100)

    async def endless_body(self, request: Any, send: Any) -> None:
        await self._start(send)
        await self._chunks(send, "endless_body", b"[", None)

    async def _chunks(self, send: Any, tool: str, head: bytes, count: int | None) -> None:
        chunk = b"x" * (1024 * 1024)
        await send({"type": "http.response.body", "body": head, "more_body": True})
        SERVED[tool] = 0
        sent = 0
        try:
            while (count is None or sent < count) and sent < 1024 and not self.gone.is_set():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                sent += 1
                SERVED[tool] = sent * len(chunk)
                await asyncio.sleep(0)
            await send({"type": "http.response.body", "body": b'"}'})
        except OSError:
            return  # the client hung up

    async def silent(self, request: Any, send: Any) -> None:
        await asyncio.sleep(3600)  # never starts an answer

    async def flood(self, request: Any, send: Any) -> None:
        """20 000 log messages on the answer's stream, then the answer."""
        await self._start(send, ctype=b"text/event-stream")
        note = json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                           "params": {"level": "info", "data": "spam " * 20}})
        batch = f"data: {note}\n\n".encode() * 500
        for _ in range(40):
            await send({"type": "http.response.body", "body": batch, "more_body": True})
        answer = {"jsonrpc": "2.0", "id": request["id"], "result": {
            "content": [{"type": "text", "text": "flooded"}]}}
        await send({"type": "http.response.body",
                    "body": f"data: {json.dumps(answer)}\n\n".encode()})

    async def flood_forever(self, request: Any, send: Any) -> None:
        """Log messages on the answer's stream until the client hangs up; never an answer."""
        await self._start(send, ctype=b"text/event-stream")
        note = json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                           "params": {"level": "info", "data": "spam"}})
        batch = f"data: {note}\n\n".encode() * 200
        try:
            while not self.gone.is_set():
                await send({"type": "http.response.body", "body": batch, "more_body": True})
                await asyncio.sleep(0.001)
        except OSError:
            return
