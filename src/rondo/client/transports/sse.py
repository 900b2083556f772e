"""A minimal Server-Sent Events reader: text lines in, events out (WHATWG framing)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from rondo.client.errors import ProtocolError
from rondo.client.limits import DEFAULT_MAX_EVENT


@dataclass
class Event:
    event: str = "message"
    data: str = ""
    id: str | None = None
    retry: int | None = None


@dataclass
class SseParser:
    """Feed it lines (without their line ending); it yields each complete event."""

    last_event_id: str | None = None
    retry_ms: int | None = None
    max_event: int = DEFAULT_MAX_EVENT  # characters of data in one event
    _size: int = 0
    _data: list[str] = field(default_factory=list)
    _event: str = ""
    _id: str | None = None
    _retry: int | None = None

    def feed(self, line: str) -> Event | None:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment: keep-alive
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._size += len(value) + 1
            if self._size > self.max_event:
                raise ProtocolError(f"server sent an SSE event larger than {self.max_event} bytes")
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        elif name == "retry" and value.isdigit():
            self._retry = int(value)
        return None

    def _dispatch(self) -> Event | None:
        if self._id is not None:
            self.last_event_id = self._id
        if self._retry is not None:
            self.retry_ms = self._retry
        event = Event(self._event or "message", "\n".join(self._data), self._id, self._retry)
        has_data = bool(self._data)
        self._data, self._event, self._id, self._retry = [], "", None, None
        self._size = 0
        return event if has_data else None


async def bounded_lines(chunks: AsyncIterator[bytes], max_line: int) -> AsyncIterator[str]:
    """Text lines from byte chunks (LF, CRLF or CR endings), refusing any line over
    `max_line` bytes: a stream with no line ending cannot grow without bound. Linear: each
    byte is scanned for a line ending once, however the stream is cut into chunks."""
    buffer = bytearray()
    pending_cr = False  # the last chunk ended in CR: an LF opening the next one belongs to it
    async for chunk in chunks:
        if not chunk:
            continue  # an empty chunk between CR and LF must not forget the CR
        if pending_cr and chunk[:1] == b"\n":
            chunk = chunk[1:]
        pending_cr = False
        scanned = len(buffer)  # what is already buffered holds no line ending
        buffer += chunk
        start = 0
        for match in _LINE_END.finditer(buffer, scanned):
            yield buffer[start:match.start()].decode("utf-8", "replace")
            start = match.end()
            pending_cr = start == len(buffer) and match.group() == b"\r"
        if start:
            del buffer[:start]
        if len(buffer) > max_line:
            raise ProtocolError(f"server sent an SSE line longer than {max_line} bytes")
    if buffer:
        yield buffer.decode("utf-8", "replace")


_LINE_END = re.compile(rb"\r\n|\r|\n")


async def events(lines: AsyncIterator[str], parser: SseParser) -> AsyncIterator[Event]:
    async for line in lines:
        event = parser.feed(line)
        if event is not None:
            yield event
