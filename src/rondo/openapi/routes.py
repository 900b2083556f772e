"""Route rules: which operations are served, and as what (a tool, a resource, a template, or
nothing), chosen by path pattern, method and tag; the first rule that matches wins."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

KINDS = ("tool", "resource", "template", "exclude")
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass(frozen=True)
class Route:
    """Operations matching every given condition become `kind`.

    `pattern` is a regular expression searched in the path (`^/admin/`), `methods` upper-case
    HTTP methods, `tags` any of the operation's tags. `confirm` overrides whether the call asks
    the user first (default: for POST, PUT, PATCH and DELETE). Resources and templates are for
    GET operations only.
    """

    kind: str = "tool"
    pattern: str | None = None
    methods: Iterable[str] | None = None
    tags: Iterable[str] | None = None
    confirm: bool | None = None
    _regex: Any = field(default=None, repr=False, compare=False)
    _methods: frozenset[str] | None = field(default=None, repr=False, compare=False)
    _tags: frozenset[str] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Route kind must be one of {KINDS}, got {self.kind!r}")
        if isinstance(self.methods, str) or isinstance(self.tags, str):
            raise ValueError("Route methods and tags are lists, not one string")
        object.__setattr__(self, "_regex", re.compile(self.pattern) if self.pattern else None)
        if self.methods is not None:
            object.__setattr__(self, "_methods", frozenset(m.upper() for m in self.methods))
        if self.tags is not None:
            object.__setattr__(self, "_tags", frozenset(self.tags))

    def matches(self, method: str, path: str, tags: Iterable[str]) -> bool:
        if self._methods is not None and method not in self._methods:
            return False
        if self._regex is not None and not self._regex.search(path):
            return False
        return self._tags is None or not self._tags.isdisjoint(tags)


def choose(routes: Iterable[Route], method: str, path: str, tags: Iterable[str]) -> Route:
    tags = tuple(tags)
    for route in routes:
        if route.matches(method, path, tags):
            return route
    return Route()
