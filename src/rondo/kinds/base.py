"""The shape every input kind shares, and the capability arithmetic they all use.

An input request is a plain JSON-ready dict `{"method": ..., "params": {...}}`. A kind knows how
to recognise one (`matches`), what client capability it needs (`required_capability`), whether
it is well formed (`validate_request`) and how to read the client's answer (`read_answer`).
Everything here is a pure function of dicts so the client side can reuse it unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, TypeGuard

Capabilities = dict[str, Any]


class _Missing:
    """The value `response(...)` returns when the client has not answered under that key yet."""

    __slots__ = ()
    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "MISSING"

    def __reduce__(self) -> str:
        return "MISSING"


MISSING = _Missing()


class NotDeclared(Exception):
    """The request needs a capability this client did not declare (so no handler answers it)."""


def to_wire(value: Any) -> Any:
    """A value type's wire form (`to_dict()`, a msgspec Struct) or the value itself."""
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    import msgspec

    if isinstance(value, msgspec.Struct):
        return msgspec.to_builtins(value)
    return value


class Kind:
    """One kind of input request. Subclasses set `name`/`method` and fill in the checks.

    - `matches(request)`: does this request belong to this kind (never raises)?
    - `required_capability(request)`: the ClientCapabilities fragment it needs.
    - `missing_capability(request, caps)` / `is_supported(request, caps)`: what of that the
      client's declared capabilities lack.
    - `validate_request(request)`: ValueError naming the offending path, else None.
    - `read_answer(request, answer)`: the answer as a value with `to_dict()` (its wire form,
      which reads back to an equal value); ValueError(reason) when the answer is malformed.
      `request` is expected to be valid; a broken one also gives ValueError, never a crash.
    """

    name: str = ""
    method: str = ""
    # The client side: which handler option answers this kind (`Client(on_elicit=...)`).
    handler: str = ""

    def declared_capability(self, options: Mapping[str, Any]) -> Capabilities:
        """What a client with this kind's handler installed declares (`{}`: it cannot answer
        this kind with these options, e.g. URL elicitation not enabled)."""
        raise NotImplementedError

    def handler_args(self, params: Mapping[str, Any], options: Mapping[str, Any]) -> tuple[Any, ...]:
        """The arguments the client's handler is called with (its typed request).

        Raises `NotDeclared` when this request needs more than the client declared."""
        return ()

    def wire_answer(self, value: Any) -> Any:
        """A handler's return value in wire form (value types know their own)."""
        return to_wire(value)

    def matches(self, request: Mapping[str, Any]) -> bool:
        return request.get("method") == self.method

    def required_capability(self, request: Mapping[str, Any]) -> Capabilities:
        raise NotImplementedError

    def missing_capability(
        self, request: Mapping[str, Any], client_caps: Mapping[str, Any] | None
    ) -> Capabilities:
        """The part of `required_capability(request)` the client did not declare (`{}` if none)."""
        have = client_caps if isinstance(client_caps, Mapping) else {}
        return capability_gap(self.required_capability(request), have)

    def is_supported(
        self, request: Mapping[str, Any], client_caps: Mapping[str, Any] | None
    ) -> bool:
        return not self.missing_capability(request, client_caps)

    def validate_request(self, request: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def read_answer(self, request: Mapping[str, Any], answer: Any) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<Kind {self.name} ({self.method})>"


# -- capability arithmetic --------------------------------------------------------------------


def capability_gap(need: Mapping[str, Any], have: Mapping[str, Any]) -> Capabilities:
    """What of `need` (a ClientCapabilities fragment) is not declared in `have`.

    A declared capability is an object; anything else (absent, null, `true`) counts as absent.
    A missing parent is reported with the whole needed subtree so the error names every leaf.
    """
    gap: Capabilities = {}
    for key, sub in need.items():
        declared = have.get(key) if isinstance(have, Mapping) else None
        if not isinstance(declared, Mapping):
            gap[key] = _copy_caps(sub)
            continue
        inner = capability_gap(sub, declared) if isinstance(sub, Mapping) else {}
        if inner:
            gap[key] = inner
    return gap


def merge_capabilities(into: Capabilities, extra: Mapping[str, Any]) -> Capabilities:
    """Deep-merge `extra` into `into` (in place) and return it."""
    for key, sub in extra.items():
        current = into.get(key)
        if isinstance(current, dict) and isinstance(sub, Mapping):
            merge_capabilities(current, sub)
        else:
            into[key] = _copy_caps(sub)
    return into


def _copy_caps(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy_caps(v) for k, v in value.items()}
    return value


# -- validation helpers: every failure names the offending path -------------------------------


class ShapeError(ValueError):
    """An input request (or its schema) rondo cannot send, naming the path and the rule. The
    text is rondo's own, so it is shown even when a server masks exceptions (`public`)."""

    public = True


def fail(path: str, reason: str) -> ValueError:
    """A ValueError reading `<path>: <reason>` (raise it)."""
    return ShapeError(f"{path}: {reason}" if path else reason)


def join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def expect_object(value: Any, path: str) -> Mapping[str, Any]:
    if type(value) is not dict and not isinstance(value, Mapping):
        raise fail(path, f"must be an object, got {json_type(value)}")
    return value


def expect_string(value: Any, path: str, *, non_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise fail(path, f"must be a string, got {json_type(value)}")
    if non_empty and not value:
        raise fail(path, "must not be empty")
    return value


def expect_list(value: Any, path: str) -> list[Any] | tuple[Any, ...]:
    if not isinstance(value, list | tuple):
        raise fail(path, f"must be an array, got {json_type(value)}")
    return value


def is_number(value: Any) -> TypeGuard[int | float]:
    """A finite JSON number (bool is not a number here, as in JSON)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value)


def expect_number(value: Any, path: str) -> int | float:
    if not is_number(value):
        raise fail(path, f"must be a finite number, got {json_type(value)}")
    return value


def expect_count(value: Any, path: str) -> int:
    """A non-negative integer such as minLength or maxItems."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise fail(path, "must be a non-negative integer")
    return value


def reject_unknown(obj: Mapping[str, Any], allowed: frozenset[str], path: str) -> None:
    for key in obj:
        if key not in allowed:
            raise fail(join(path, key), "is not allowed here")


def check_meta(obj: Mapping[str, Any], path: str) -> None:
    if "_meta" in obj:
        expect_object(obj["_meta"], join(path, "_meta"))


def check_json_value(value: Any, path: str, depth: int = 0) -> None:
    """Accept only what JSON can carry: objects with string keys, arrays, scalars, null."""
    if depth > 64:
        raise fail(path, "is nested too deeply")
    if value is None or isinstance(value, str | bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise fail(path, "must be a finite number")
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise fail(path, "object keys must be strings")
            check_json_value(item, join(path, key), depth + 1)
        return
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            check_json_value(item, join(path, index), depth + 1)
        return
    raise fail(path, f"is not JSON data ({type(value).__name__})")


def json_copy(value: Any) -> Any:
    """A fresh JSON-ready copy (tuples become lists) so callers cannot alias our requests."""
    if isinstance(value, Mapping):
        return {key: json_copy(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_copy(item) for item in value]
    return value


def json_type(value: Any) -> str:
    """The JSON name of a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__


def expect_answer_object(answer: Any) -> Mapping[str, Any]:
    if type(answer) is not dict and not isinstance(answer, Mapping):
        raise ValueError(f"answer must be an object, got {json_type(answer)}")
    return answer


def expect_params(
    request: Mapping[str, Any], kind: Kind, *, optional: bool = False
) -> Mapping[str, Any]:
    """Check `request` is an object for `kind` and return its params object."""
    if not isinstance(request, Mapping):
        raise fail("request", f"must be an object, got {json_type(request)}")
    reject_unknown(request, _REQUEST_KEYS, "request")
    if request.get("method") != kind.method:
        raise fail("method", f"must be {kind.method!r}")
    if "params" not in request:
        if optional:
            return {}
        raise fail("params", "is required")
    return expect_object(request["params"], "params")


_REQUEST_KEYS = frozenset({"method", "params"})
