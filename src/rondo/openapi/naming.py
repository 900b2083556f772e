"""Tool names from operations: the MCP tool-name rules, and collisions settled by document order."""

from __future__ import annotations

import re

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
MAX_NAME = 128


def clean(text: str) -> str:
    """`text` as a tool name: runs of other characters become one `_`, at most 128 characters."""
    name = _UNSAFE.sub("_", text).strip("_.-")
    return name[:MAX_NAME].rstrip("_.-") or "operation"


def default_name(operation_id: str | None, method: str, path: str) -> str:
    """From the `operationId`, else `<method>_<path>` (`get_users_id` for GET /users/{id})."""
    if operation_id:
        return clean(operation_id)
    return clean(f"{method.lower()}_{_UNSAFE.sub('_', path).strip('_')}")


class Names:
    """Hands out unique names: the first to ask keeps a name, later ones get `_2`, `_3`, ..."""

    def __init__(self) -> None:
        self.taken: set[str] = set()
        self.next: dict[str, int] = {}  # the next suffix to try per name (linear, not quadratic)

    def claim(self, name: str) -> str:
        unique, n = name, self.next.get(name, 2)
        while unique in self.taken:
            suffix = f"_{n}"
            unique, n = name[: MAX_NAME - len(suffix)] + suffix, n + 1
        self.next[name] = n
        self.taken.add(unique)
        return unique
