"""Roots (deprecated in 2026-07-28, still scored): ask the client which directories it works in.

A root is the client's claim about its file system, not an access grant: check every path you
derive from one against your own authorisation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from .base import (
    Capabilities,
    Kind,
    check_meta,
    expect_answer_object,
    expect_list,
    expect_object,
    expect_params,
    expect_string,
    fail,
    join,
    json_copy,
    reject_unknown,
    to_wire,
)

METHOD = "roots/list"


class Root(msgspec.Struct, frozen=True):
    uri: str
    name: str | None = None
    meta: dict[str, Any] | None = None

    @property
    def path(self) -> str:
        """The local path the `file://` URI names (percent-escapes decoded)."""
        from urllib.parse import unquote, urlsplit

        return unquote(urlsplit(self.uri).path)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"uri": self.uri}
        if self.name is not None:
            out["name"] = self.name
        if self.meta is not None:
            out["_meta"] = json_copy(self.meta)
        return out


class RootList(list[Root]):
    """The client's roots: a plain list of `Root`, plus the wire form via `to_dict()`."""

    def to_dict(self) -> dict[str, Any]:
        """The wire form (a `ListRootsResult`); `read_answer` reads it back unchanged."""
        return {"roots": [root.to_dict() for root in self]}


class Roots(Kind):
    name = "roots"
    method = METHOD
    handler = "on_roots"

    def declared_capability(self, options: Mapping[str, Any]) -> Capabilities:
        return {"roots": {}}

    def wire_answer(self, value: Any) -> Any:
        # A handler may return the wire form, a RootList, or any iterable of Roots and URIs.
        if isinstance(value, Mapping) or hasattr(value, "to_dict"):
            return to_wire(value)
        return {"roots": [{"uri": r} if isinstance(r, str) else to_wire(r) for r in value]}

    def required_capability(self, request: Mapping[str, Any]) -> Capabilities:
        return {"roots": {}}

    def validate_request(self, request: Mapping[str, Any]) -> None:
        params = expect_params(request, self, optional=True)
        reject_unknown(params, frozenset({"_meta"}), "")
        check_meta(params, "")

    def read_answer(self, request: Mapping[str, Any], answer: Any) -> RootList:
        answer = expect_answer_object(answer)
        if "roots" not in answer:
            raise fail("roots", "is required")
        roots = RootList()
        for index, item in enumerate(expect_list(answer["roots"], "roots")):
            path = join("roots", index)
            item = expect_object(item, path)
            if "uri" not in item:
                raise fail(join(path, "uri"), "is required")
            uri = expect_string(item["uri"], join(path, "uri"))
            if not uri.startswith("file://"):
                raise fail(join(path, "uri"), "must start with file://")
            name = item.get("name")
            if name is not None:
                expect_string(name, join(path, "name"))
            check_meta(item, path)
            meta = item.get("_meta")
            roots.append(Root(uri, name, json_copy(meta) if meta is not None else None))
        return roots


ROOTS = Roots()


def list_roots() -> dict[str, Any]:
    """A `roots/list` input request (exported as `rondo.roots.list`)."""
    return {"method": METHOD, "params": {}}
