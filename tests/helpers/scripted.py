"""`Scripted`: a client transport answering each request from a function, for the client tests
that need a malformed or misbehaving server (`Client(Scripted(lambda m: {"result": ...}))`)."""

from __future__ import annotations

from typing import Any


class Scripted:
    """A fake transport: `answer(message)` gives the response's fields after `jsonrpc` and `id`
    (a `result` or an `error`); notifications go nowhere."""

    name = "memory"
    legacy_version = None

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    async def start(self, on_incoming: Any) -> None:
        return None

    async def request(self, message: dict[str, Any], headers: Any = None) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": message["id"], **self.answer(message)}

    async def notify(self, message: dict[str, Any]) -> None:
        return None

    async def after_handshake(self) -> None:
        return None

    async def close(self) -> None:
        return None
