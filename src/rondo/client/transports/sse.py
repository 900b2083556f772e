"""A minimal Server-Sent Events reader: text lines in, events out (WHATWG framing)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field


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
        return event if has_data else None


async def events(lines: AsyncIterator[str], parser: SseParser) -> AsyncIterator[Event]:
    async for line in lines:
        event = parser.feed(line)
        if event is not None:
            yield event
