"""One socket write per fixed-length HTTP response, under uvicorn's httptools protocol.

uvicorn writes a response's status line and headers as soon as the app sends
`http.response.start`, and its body on `http.response.body`: two `write` calls, so (under
uvloop, which sends at once when nothing is queued) two syscalls and two TCP segments per
answer. For a response with a `content-length` the client can do nothing with the head alone,
so `CoalescingTransport` holds that head and sends it with the first body write, in one call.

Everything else passes straight through, in order: the head of a streamed (chunked) response,
`100 Continue`, a refusal the protocol writes itself. A held head is written before any other
write, when its response completes (`flush`, called by the protocol's `on_response_complete`:
a HEAD answer has a content length and no body, so no body write would ever release it) and
before the connection closes, so bytes never change order, none are dropped and none wait.
"""

from __future__ import annotations

from typing import Any

# A body at least this long goes out as two buffers rather than being copied behind the head.
_JOIN_BELOW = 64 * 1024


class CoalescingTransport:
    """Wraps the transport a uvicorn httptools protocol writes to (`protocol.cycle` is the
    request/response cycle in progress, as uvicorn keeps it)."""

    __slots__ = ("_transport", "_protocol", "_held", "_headed")

    def __init__(self, transport: Any, protocol: Any) -> None:
        self._transport = transport
        self._protocol = protocol
        self._held: bytes | None = None
        self._headed: Any = None  # the cycle whose head has been written (or held)

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:
            self._held = None
            if type(data) is bytes and type(held) is bytes and len(data) < _JOIN_BELOW:
                self._transport.write(held + data)
            else:  # long, or another buffer type (a memoryview does not concatenate)
                self._transport.writelines((held, data))
            return
        cycle = self._protocol.cycle
        # The first write after a cycle's response started is its head (uvicorn sets
        # `response_started` before writing it; `100 Continue` is written before that).
        if cycle is not None and cycle.response_started and cycle is not self._headed:
            self._headed = cycle
            if cycle.chunked_encoding is False and cycle.expected_content_length:
                self._held = data  # a body of known length follows
                return
        self._transport.write(data)

    def flush(self) -> None:
        held = self._held
        if held is not None:
            self._held = None
            self._transport.write(held)

    def writelines(self, data: Any) -> None:
        self.flush()
        self._transport.writelines(data)

    def close(self) -> None:
        self.flush()  # what uvicorn had written already still goes out first
        self._transport.close()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def is_closing(self) -> bool:
        return bool(self._transport.is_closing())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
