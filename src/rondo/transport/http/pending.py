"""Notifications waiting to be written to one SSE answer, bounded.

A client that does not read cannot make the server hold more than this. Notifications that
supersede an earlier one still waiting are merged into it: a list change replaces the same list
change, a resource update the same URI's, a progress report the same token's (the newest wins,
in the older one's place). What cannot be merged (log lines, say) counts towards `cap` while
a write to the client is stuck, and towards `HARD_FACTOR * cap` while the handler runs without
letting the writer in; past either the request is dropped (`overflowed`).
"""

from __future__ import annotations

from typing import Any

HARD_FACTOR = 16
_LISTS = frozenset({"notifications/tools/list_changed", "notifications/prompts/list_changed",
                    "notifications/resources/list_changed"})


def merge_key(note: dict[str, Any]) -> Any:
    method = note.get("method")
    if method in _LISTS:
        return method
    params = note.get("params")
    if not isinstance(params, dict):
        return None
    if method == "notifications/resources/updated":
        return method, params.get("uri")
    if method == "notifications/progress":
        token = params.get("progressToken")
        return (method, token) if isinstance(token, str | int) else None
    return None


class PendingNotes:
    __slots__ = ("cap", "notes", "where", "sending", "overflowed")

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.notes: list[dict[str, Any]] = []
        self.where: dict[Any, int] = {}
        self.sending = False  # a write to the client is in progress
        self.overflowed = False

    def __len__(self) -> int:
        return len(self.notes)

    def __bool__(self) -> bool:
        return bool(self.notes)

    def add(self, note: dict[str, Any]) -> bool:
        """Queue `note`; False once the client is judged not to be reading."""
        if self.overflowed:
            return False
        key = merge_key(note)
        if key is not None:
            at = self.where.get(key)
            if at is not None:
                self.notes[at] = note
                return True
        size = len(self.notes)
        if size >= self.cap * HARD_FACTOR or (self.sending and size >= self.cap):
            self.overflowed = True
            return False
        if key is not None:
            self.where[key] = size
        self.notes.append(note)
        return True

    def take(self) -> list[dict[str, Any]]:
        notes, self.notes = self.notes, []
        self.where.clear()
        return notes
