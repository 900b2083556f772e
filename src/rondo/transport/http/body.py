"""Reading a request body within `max_body` bytes, from ASGI `http.request` messages."""

from __future__ import annotations

from .asgi import Headers, Receive
from .inbound import declared_too_large


class Disconnected(Exception):
    """The client left before its body had arrived."""


class BodyTooLarge(Exception):
    """The body is, or announces being, over the bound (413)."""


async def read_body(headers: Headers, receive: Receive, max_body: int) -> bytes:
    """The whole body; `BodyTooLarge` as soon as it is known to exceed `max_body`."""
    if declared_too_large(headers, max_body):
        raise BodyTooLarge
    message = await receive()
    if message["type"] == "http.request" and not message.get("more_body", False):
        body: bytes = message.get("body", b"")  # the usual request: one message
        if len(body) > max_body:
            raise BodyTooLarge
        return body
    chunks: list[bytes] = []
    size = 0
    while True:
        if message["type"] == "http.disconnect":
            raise Disconnected
        chunk = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > max_body:
                raise BodyTooLarge
            chunks.append(chunk)
        if not message.get("more_body", False):
            break
        message = await receive()
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
