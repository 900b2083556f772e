"""The ASGI wrappers' body handling in the tests (an upstream that records or misbehaves in
front of a real app): `read_body(receive)` takes a request's whole body, and
`replaying(body, receive)` is a `receive` that gives it once more, whole, then passes on to
the real one (so the wrapped app reads the request as sent, and still hears the disconnect)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Receive = Callable[[], Awaitable[Any]]


async def read_body(receive: Receive) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


def replaying(body: bytes, receive: Receive) -> Receive:
    given = False

    async def again() -> Any:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again
