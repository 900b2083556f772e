"""OpenAPI schemas as JSON Schema 2020-12 (the dialect MCP assumes without `$schema`).

Every local schema `$ref` becomes `#/$defs/<name>`; each referenced schema is translated once
per document, when a tool first needs it, and shared by every tool that needs it, so cycles stay
references and a large document costs at most one pass. Def names do not depend on the order
tools are translated in (every replica of a server gives the same schemas): a component's name
is settled from the document's list of components, another pointer's from the pointer itself. OpenAPI 3.0 keywords are rewritten: `nullable` (to a `null` type, enum
member or `anyOf` branch), boolean `exclusiveMinimum`/`exclusiveMaximum`, `example`; OpenAPI
only annotations (`discriminator`, `xml`, `externalDocs`, `x-*`) are dropped.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from .errors import Unsupported
from .refs import lookup

_DROP = frozenset({"discriminator", "xml", "externalDocs", "$schema", "$id", "nullable",
                   "example", "exclusiveMinimum", "exclusiveMaximum", "$ref"})
_ONE = ("items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else",
        "unevaluatedProperties", "unevaluatedItems", "additionalItems")
_MAPS = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")
_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_COMPONENT = "#/components/schemas/"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
MAX_DEPTH = 100  # schemas inside schemas, following references (a bound on recursion)


class Translator:
    """One document's schemas: `translate` a schema, then `defs_for` the `$defs` it needs."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.v30 = str(doc.get("openapi", "")).startswith("3.0")
        self.names: dict[str, str] = {}  # $ref -> def name
        self.defs: dict[str, Any] = {}  # def name -> translated schema
        self.edges: dict[str, frozenset[str]] = {}  # def name -> def names it references
        self.failed: dict[str, str] = {}  # $ref -> why it cannot be used
        self.roots = 0  # schemas translated through `translate` (what tests count)
        self.built: dict[str, int] = {}  # def name -> times translated (once, by design)
        self.component_names: dict[str, str] = {}  # component $ref -> def name, in doc order
        components = doc.get("components")
        listed = components.get("schemas") if isinstance(components, dict) else None
        if isinstance(listed, dict):
            taken: set[str] = set()
            for key in listed:
                base = _UNSAFE.sub("_", str(key)) or "schema"
                name, n = base, 2
                while name in taken:
                    name, n = f"{base}_{n}", n + 1
                taken.add(name)
                escaped = str(key).replace("~", "~0").replace("/", "~1")
                self.component_names[_COMPONENT + escaped] = name
        self.taken = frozenset(self.component_names.values())

    def translate(self, schema: Any, refs: set[str]) -> Any:
        """`schema` in 2020-12; the def names it references are added to `refs`."""
        self.roots += 1
        return self._node(schema, refs, 0)

    def defs_for(self, refs: set[str]) -> dict[str, Any]:
        """Every def reachable from `refs` (closed under references), in a stable order."""
        seen: set[str] = set()
        todo = sorted(refs)
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            todo.extend(self.edges.get(name, ()))
        return {name: self.defs[name] for name in sorted(seen)}

    def schema(self, schema: Any, extra_refs: set[str] | None = None) -> dict[str, Any]:
        """A standalone schema (an output schema): the root's own `$ref` inlined, `$defs` added."""
        refs: set[str] = set(extra_refs or ())
        out = self.translate(schema, refs)
        if isinstance(out, dict) and set(out) == {"$ref"}:
            out = dict(self.defs[out["$ref"].rsplit("/", 1)[1]])
        elif not isinstance(out, dict):
            out = {} if out is True else {"not": {}}
        if refs:
            out["$defs"] = self.defs_for(refs)
        return out

    def resolve(self, schema: Any) -> Any:
        """A schema with its root `$ref`s followed (for looking at a body's properties)."""
        hops = 0
        while isinstance(schema, dict) and "$ref" in schema and hops < 32:
            schema = lookup(self.doc, schema["$ref"])
            hops += 1
        return schema

    # -- translation ---------------------------------------------------------------------------

    def _ref(self, ref: Any, refs: set[str], depth: int) -> dict[str, Any]:
        if ref in self.failed:
            raise Unsupported(self.failed[ref])
        name = self.names.get(ref)
        if name is None:
            try:
                target = lookup(self.doc, ref)
            except Unsupported as exc:
                self.failed[ref] = str(exc)
                raise
            name = self._name(ref)
            self.names[ref] = name
            self.defs[name] = {}  # a placeholder first: a cycle back here ends at the reference
            own: set[str] = set()
            self.built[name] = self.built.get(name, 0) + 1
            try:
                self.defs[name] = self._node(target, own, depth + 1)
            except Unsupported as exc:
                self.failed[ref] = str(exc)
                del self.names[ref], self.defs[name]
                raise
            self.edges[name] = frozenset(own)
        refs.add(name)
        return {"$ref": f"#/$defs/{name}"}

    def _name(self, ref: str) -> str:
        """A component's settled name; any other pointer's own text when that is already a safe
        name no component has, else that text made safe plus a digest of the pointer."""
        name = self.component_names.get(ref)
        if name is not None:
            return name
        raw = ref[2:] if ref.startswith("#/") else ref[1:]
        base = _UNSAFE.sub("_", raw.replace("~1", "_").replace("~0", "_")) or "schema"
        if base != raw or base in self.taken:
            base = f"{base}_{hashlib.sha256(ref.encode()).hexdigest()[:8]}"
        return base

    def _node(self, node: Any, refs: set[str], depth: int) -> Any:
        if isinstance(node, bool):
            return node
        if not isinstance(node, dict):
            raise Unsupported(f"a schema must be an object, got {type(node).__name__}")
        if depth > MAX_DEPTH:
            raise Unsupported(f"schemas nested deeper than {MAX_DEPTH} (references included)")
        if "$ref" in node:
            ref = self._ref(node["$ref"], refs, depth)
            if self.v30 or len(node) == 1:
                return ref  # 3.0: siblings of $ref are ignored
            out = self._keywords(node, refs, depth)
            out["$ref"] = ref["$ref"]
            return out
        return self._keywords(node, refs, depth)

    def _keywords(self, node: dict[str, Any], refs: set[str], depth: int) -> Any:
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROP or key.startswith("x-"):
                continue
            if key == "items" and isinstance(value, list):
                out["prefixItems"] = [self._node(v, refs, depth + 1) for v in value]
            elif key in _ONE:
                out[key] = self._node(value, refs, depth + 1)
            elif key in _MAPS:
                if not isinstance(value, dict):
                    raise Unsupported(f"'{key}' must be an object")
                out[key] = {k: self._node(v, refs, depth + 1) for k, v in value.items()}
            elif key in _LISTS:
                if not isinstance(value, list):
                    raise Unsupported(f"'{key}' must be a list")
                out[key] = [self._node(v, refs, depth + 1) for v in value]
            else:
                out[key] = value
        for bound, plain in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if bound in node:
                flag = node[bound]
                if isinstance(flag, bool):  # 3.0: a flag on minimum/maximum
                    if flag and plain in node:
                        out[bound] = out.pop(plain)
                else:
                    out[bound] = flag
        if "example" in node and "examples" not in node:
            out["examples"] = [node["example"]]
        if self.v30 and node.get("nullable") is True:
            return _nullable(out)
        return out


def _nullable(out: dict[str, Any]) -> dict[str, Any]:
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
    elif isinstance(kind, list):
        if "null" not in kind:
            out["type"] = [*kind, "null"]
    else:
        return {"anyOf": [out, {"type": "null"}]}
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out
