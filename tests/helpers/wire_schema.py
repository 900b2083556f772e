"""Validate JSON-RPC messages against the official MCP JSON schemas, as the conformance runner does.

    from tests.helpers.wire_schema import validate
    validate(response, method="tools/call")               # 2026-07-28 wire
    validate(response, era="2025-11-25", method="ping")

Dispatch mirrors the runner's `wire-schema-valid` check: a message with `method` is checked
against that method's Request/Notification definition; an error response against the typed error
definition for its code (else `JSONRPCErrorResponse`); a result against `InputRequiredResult` when
`resultType == "input_required"`, else the method's `<X>Result`, and always against the generic
`JSONRPCResultResponse`. Schemas come from `$RONDO_SCHEMA_DIR` or `../shared/schema/` beside the
repository.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import re
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource

ROOT = Path(__file__).resolve().parents[2]
ERAS = ("2026-07-28", "2025-11-25")
# The union definitions would otherwise shadow the concrete ones in the method lookup.
UNIONS = {
    "ClientRequest",
    "ClientNotification",
    "ClientResult",
    "ClientMessage",
    "ServerRequest",
    "ServerNotification",
    "ServerResult",
    "ServerMessage",
}
# Results whose definition name does not follow `<X>Request` -> `<X>Result`.
EXTRA_RESULTS = {
    "ping": "EmptyResult",
    "logging/setLevel": "EmptyResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
}
EXTENSION_RESULT_TYPES = {"task"}  # validated only by the generic envelope, like the runner

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S*$")
_TEMPLATE_EXPR = re.compile(
    r"^[+#./;?&=,!@|]?"
    r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*(?::[1-9]\d{0,3}|\*)?"
    r"(?:,(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*(?::[1-9]\d{0,3}|\*)?)*$"
)


def schema_dir() -> Path:
    return Path(os.environ.get("RONDO_SCHEMA_DIR") or ROOT.parent / "shared" / "schema")


def _is_uri(value: object) -> bool:
    """Absolute URI: a scheme, a colon, no whitespace (cheap stand-in for RFC 3986)."""
    return not isinstance(value, str) or bool(_SCHEME.match(value))


def _is_uri_template(value: object) -> bool:
    """RFC 6570 shape: balanced braces around valid expressions, no stray braces or spaces."""
    if not isinstance(value, str):
        return True
    if any(ch.isspace() for ch in value):
        return False
    for i, part in enumerate(re.split(r"(\{[^{}]*\})", value)):
        if i % 2:
            if not _TEMPLATE_EXPR.match(part[1:-1]):
                return False
        elif "{" in part or "}" in part:
            return False
    return True


def _format_checker() -> FormatChecker:
    checker = FormatChecker(formats=())
    checker.checks("uri")(_is_uri)
    checker.checks("uri-template")(_is_uri_template)
    return checker


class _Era:
    """One schema revision: its definitions, the lookup tables, and compiled validators."""

    def __init__(self, era: str) -> None:
        path = schema_dir() / f"{era}.schema.json"
        if not path.exists():
            raise FileNotFoundError(f"no schema for era {era!r} at {path} (set RONDO_SCHEMA_DIR)")
        schema = json.loads(path.read_text())
        if era == "2025-11-25":
            schema = _erratum_number_schema(schema)
        self.defs: dict[str, Any] = schema["$defs"]
        self.uri = f"urn:mcp:{era}"
        resource = Resource.from_contents({**schema, "$id": self.uri})
        self.registry: Registry = Registry().with_resource(self.uri, resource)
        self.format_checker = _format_checker()
        self.method_defs: dict[str, str] = {}
        self.result_defs: dict[str, str] = {}
        self.error_defs: dict[int, str] = {}
        for name, definition in self.defs.items():
            if name in UNIONS:
                continue
            props = definition.get("properties", {})
            method = props.get("method", {}).get("const")
            if isinstance(method, str):
                self.method_defs[method] = name
                result = name.removesuffix("Request") + "Result"
                if name.endswith("Request") and result in self.defs:
                    self.result_defs[method] = result
            for part in props.get("error", {}).get("allOf", []):
                code = part.get("properties", {}).get("code", {}).get("const")
                if isinstance(code, int):
                    self.error_defs[code] = name
        for method, result in EXTRA_RESULTS.items():
            if method in self.method_defs and result in self.defs:
                self.result_defs.setdefault(method, result)
        self._validators: dict[str, Draft202012Validator] = {}

    def validator(self, definition: str) -> Draft202012Validator:
        if definition not in self._validators:
            if definition not in self.defs:
                raise KeyError(f"schema has no definition {definition!r}")
            self._validators[definition] = Draft202012Validator(
                {"$ref": f"{self.uri}#/$defs/{definition}"},
                registry=self.registry,
                format_checker=self.format_checker,
            )
        return self._validators[definition]

    def violations(self, definition: str, instance: Any) -> list[str]:
        errors = sorted(
            self.validator(definition).iter_errors(instance), key=lambda e: list(e.absolute_path)
        )
        out = []
        for error in errors:
            where = "/".join(str(p) for p in error.absolute_path) or "(root)"
            out.append(f"{definition} at {where}: {_leaf_message(error)}")
        return out


def _leaf_message(error: Any) -> str:
    """The most specific reason: anyOf/oneOf failures otherwise say only 'is not valid'."""
    if error.context:
        best = min(error.context, key=lambda e: (-len(e.absolute_path), len(e.message)))
        return f"{error.message[:120]} (deepest: {best.message[:200]})"
    return error.message[:300]


def _erratum_number_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The runner's 2025-11-25 erratum: NumberSchema minimum/maximum/default accept numbers."""
    schema = copy.deepcopy(schema)
    props = schema["$defs"].get("NumberSchema", {}).get("properties", {})
    for key in ("minimum", "maximum", "default"):
        if props.get(key, {}).get("type") == "integer":
            props[key]["type"] = "number"
    return schema


@cache
def _era(era: str) -> _Era:
    if era not in ERAS:
        raise ValueError(f"unknown era {era!r}; expected one of {ERAS}")
    return _Era(era)


def violations(message: Any, *, era: str = "2026-07-28", method: str | None = None) -> list[str]:
    """Every schema violation of one JSON-RPC message (empty when valid)."""
    schema = _era(era)
    if isinstance(message, list):
        return [f"batch arrays are not valid JSON-RPC messages in MCP {era}"]
    if not isinstance(message, dict):
        return [f"not a JSON object: {message!r}"]
    if isinstance(message.get("method"), str):
        kind = "JSONRPCRequest" if "id" in message else "JSONRPCNotification"
        return schema.violations(schema.method_defs.get(message["method"], kind), message)
    if message.get("error") is not None:
        code = message["error"].get("code") if isinstance(message["error"], dict) else None
        typed = schema.error_defs.get(code) if isinstance(code, int) else None
        return schema.violations(typed or "JSONRPCErrorResponse", message)
    if "result" in message:
        result = message["result"]
        result_type = result.get("resultType") if isinstance(result, dict) else None
        typed = None
        if result_type == "input_required" and "InputRequiredResult" in schema.defs:
            typed = "InputRequiredResult"
        elif result_type not in EXTENSION_RESULT_TYPES and method is not None:
            typed = schema.result_defs.get(method)
        found = []
        if typed:
            found += [f"{v} (result of {method!r})" for v in schema.violations(typed, result)]
        return found + schema.violations("JSONRPCResultResponse", message)
    return ["not a JSON-RPC request, notification or response"]


def validate(message: Any, *, era: str = "2026-07-28", method: str | None = None) -> None:
    """Raise AssertionError listing every violation; `method` names the request a result answers."""
    found = violations(message, era=era, method=method)
    if found:
        shown = json.dumps(message)[:600]
        lines = "\n  ".join(found)
        raise AssertionError(
            f"{len(found)} schema violation(s) ({era}):\n  {lines}\nmessage: {shown}"
        )


@functools.cache
def definition(name: str, era: str = "2026-07-28") -> Draft202012Validator:
    """A validator for one `$defs` entry of an official schema (e.g. "ContentBlock")."""
    path = schema_dir() / f"{era}.schema.json"
    if not path.exists():
        raise FileNotFoundError(f"no schema for era {era!r} at {path} (set RONDO_SCHEMA_DIR)")
    root = json.loads(path.read_text())
    return Draft202012Validator({**root, "$ref": f"#/$defs/{name}"})


def assert_definition(name: str, value: object, era: str = "2026-07-28") -> None:
    errors = list(definition(name, era).iter_errors(value))
    assert not errors, [e.message for e in errors]
