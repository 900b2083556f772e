"""A webhook receiver for tests: a real loopback HTTP server that verifies every POST's
Standard Webhooks signature with the secret it was given, echoes verification challenges, and
answers event deliveries with the next status of `statuses` (then 200)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from rondo.events import verify


class Receiver:
    def __init__(self, secret: str, statuses: list[int] | None = None,
                 echo: bool = True) -> None:
        self.secret = secret
        self.statuses = list(statuses or [])
        self.echo = echo
        self.deliveries: list[dict[str, Any]] = []  # every event POST: body, headers, verified
        self.attempts = 0
        self.server: asyncio.Server | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/test"

    async def start(self) -> Receiver:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                headers: dict[str, str] = {}
                while True:
                    raw = (await reader.readline()).decode().rstrip("\r\n")
                    if not raw:
                        break
                    name, _, value = raw.partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                status, answer = self._answer(headers, body)
                payload = json.dumps(answer).encode()
                writer.write(f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n"
                             f"content-length: {len(payload)}\r\n\r\n".encode() + payload)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    def _answer(self, headers: dict[str, str], body: bytes) -> tuple[int, Any]:
        ok = verify(self.secret, headers, body)
        message = json.loads(body)
        if message.get("type") == "verification":
            return 200, ({"challenge": message["challenge"]} if self.echo and ok else {})
        self.attempts += 1
        status = self.statuses.pop(0) if self.statuses else 200
        if status == 200:
            self.deliveries.append({"body": message, "headers": headers, "verified": ok})
        return status, {}
