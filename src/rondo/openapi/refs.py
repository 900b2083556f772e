"""Local `$ref` lookup (JSON pointers into the same document). Other documents and network
references are never fetched: an operation that needs one is skipped."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from .errors import Unsupported

MAX_HOPS = 32  # a $ref chain longer than this is a cycle of references to references


def lookup(doc: dict[str, Any], ref: Any) -> Any:
    """What a local reference `#/a/b` points at; Unsupported for external or dangling ones."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        raise Unsupported(f"external $ref {ref!r} (only references inside the document)")
    node: Any = doc
    if ref in ("#", "#/"):
        return node
    if not ref.startswith("#/"):
        raise Unsupported(f"$ref {ref!r} is not a JSON pointer")
    for raw in ref[2:].split("/"):
        part = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise Unsupported(f"dangling $ref {ref!r}")
    return node


def deref(doc: dict[str, Any], node: Any) -> Any:
    """Follow `$ref` objects (a parameter, a body, a response) until a real one; cycles refused."""
    seen: list[str] = []
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        if ref in seen or len(seen) >= MAX_HOPS:
            raise Unsupported(f"cyclic $ref {ref!r}")
        seen.append(ref)
        node = lookup(doc, ref)
    return node
