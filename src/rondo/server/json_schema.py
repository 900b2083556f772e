"""JSON Schema from a handler's type hints: the input schema of its parameters' Struct, the
output schema its return annotation implies (none when the result is content), pydantic
models' own schemas hoisted so `#/$defs/...` references resolve."""

from __future__ import annotations

import contextlib
import inspect
import sys
import types
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Annotated, Any, Union, get_args, get_origin

import msgspec

from . import content as _content
from .declared import declared_enums, restore_enum_order

REF_PREFIX = "#/$defs/"
ROOT_NAME = "RondoArguments"  # the parameters' Struct, whose schema is the input schema
_EMPTY = inspect.Parameter.empty


def is_pydantic_model(tp: Any) -> bool:
    # Recognised by the class hierarchy so pydantic is never imported for code that lacks it.
    if not isinstance(tp, type):
        return False
    return any(c.__name__ == "BaseModel" and c.__module__ == "pydantic.main" for c in tp.__mro__)



class _SchemaHook:
    """msgspec's hook for types it does not know: pydantic models bring their own schema,
    whose `$defs` are hoisted to the root so `#/$defs/...` references resolve."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.defs: dict[str, Any] = {}
        self.used = False

    def __call__(self, tp: Any) -> dict[str, Any]:
        if not is_pydantic_model(tp):
            raise NotImplementedError
        self.used = True
        schema = tp.model_json_schema(ref_template=REF_PREFIX + "{model}", mode=self.mode)
        for key, value in schema.pop("$defs", {}).items():
            if self.defs.setdefault(key, value) != value:
                raise ValueError(f"two different pydantic models are both named {key!r}")
        return dict(schema)


def _components(types_: Sequence[Any], mode: str) -> tuple[tuple[Any, ...], dict[str, Any], bool]:
    hook = _SchemaHook(mode)
    refs, components = msgspec.json.schema_components(
        types_, schema_hook=hook, ref_template=REF_PREFIX + "{name}"
    )
    for key, value in hook.defs.items():
        if components.setdefault(key, value) != value:
            raise ValueError(f"two different types are both named {key!r}")
    return refs, components, hook.used


def input_schema(
    fn_name: str,
    struct: Any,
    fields: list[tuple[Any, ...]],
    extras: Any,
    defaults: dict[str, Any],
) -> tuple[dict[str, Any], bool]:
    wanted = [struct] if extras is None or extras is Any else [struct, extras]
    try:
        refs, components, uses_pydantic = _components(wanted, "validation")
    except (TypeError, ValueError, NameError) as exc:
        raise ValueError(f"{fn_name}: {_culprit(fields, extras) or exc}") from None
    body = components.pop(ROOT_NAME)
    root: dict[str, Any] = {"type": "object", "properties": body.get("properties", {})}
    if body.get("required"):
        root["required"] = body["required"]
    if extras is None:
        root["additionalProperties"] = False
    elif extras is not Any:
        root["additionalProperties"] = refs[1]
    for key, default in defaults.items():
        prop = root["properties"][key]
        if "default" not in prop:
            with contextlib.suppress(TypeError, msgspec.EncodeError):
                prop["default"] = msgspec.to_builtins(default)
    return _finish(root, components), uses_pydantic


def _culprit(fields: list[tuple[Any, ...]], extras: Any) -> str | None:
    # Decoration time only: find which parameter msgspec could not handle, to name it.
    for field in fields:
        try:
            _components([field[1]], "validation")
        except (TypeError, ValueError, NameError) as exc:
            return f"parameter {field[0]!r} has an unsupported type: {exc}"
    if extras is not None and extras is not Any:
        try:
            _components([extras], "validation")
        except (TypeError, ValueError, NameError) as exc:
            return f"**kwargs has an unsupported type: {exc}"
    return None


_NO_OUTPUT = (
    str,
    bytes,
    bytearray,
    dict,
    list,
    tuple,
    set,
    frozenset,
    object,
    Any,
    type(None),
    None,
)


def _is_content_hint(tp: Any) -> bool:
    # Identity: hints may be unhashable. Until something imports the content TypedDicts no
    # hint can be one of them, and start-up does not build them (wire/content_types.py).
    named = sys.modules.get("rondo.wire.content_types")
    if named is not None and any(tp is c for c in named.CONTENT_TYPES):
        return True
    if isinstance(tp, type) and issubclass(tp, _content.ToolResult):
        return True
    origin = get_origin(tp)
    if origin is Annotated:
        return _is_content_hint(get_args(tp)[0])
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        return any(a is str or _is_content_hint(a) for a in args)
    if origin in (list, tuple, Sequence):
        return any(a is not Ellipsis and _is_content_hint(a) for a in get_args(tp))
    return False


def output_schema(tp: Any) -> dict[str, Any] | None:
    """The output schema a return annotation implies, or None when the result is content."""
    if tp is _EMPTY or tp in _NO_OUTPUT or _is_content_hint(tp):
        return None
    origin = get_origin(tp)
    if origin is Annotated:
        if get_args(tp)[0] in _NO_OUTPUT:
            return None
    elif origin is type or (
        getattr(origin, "__module__", None) == "collections.abc"
        and not issubclass(origin, (Mapping, Sequence, AbstractSet))
    ):
        return None  # Awaitable, Iterator, Callable, type[...] are not data
    try:
        from .schema import _prepare  # the type as the binder gives it to msgspec

        refs, components, _ = _components([_prepare(tp)], "serialization")
    except (TypeError, ValueError, NameError):
        return None  # a return type msgspec cannot describe just means unstructured output
    root = dict(refs[0])
    ref = root.get("$ref")
    if isinstance(ref, str) and len(root) == 1:
        key = ref[len(REF_PREFIX) :]
        if not _referenced(components, key):  # a recursive type keeps its $ref
            root = components.pop(key)
    return restore_enum_order(_finish(root, components), declared_enums([tp]))


def _finish(root: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    """Inline enum-only definitions (easier for models to read), keep the rest as `$defs`."""
    enums = {k: v for k, v in components.items() if "enum" in v and "properties" not in v}
    if enums:
        root = _inline(root, enums)
        components = {k: _inline(v, enums) for k, v in components.items() if k not in enums}
    if components:
        root["$defs"] = components
    return root


def _inline(node: Any, enums: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if (
            isinstance(ref, str)
            and ref.startswith(REF_PREFIX)
            and ref[len(REF_PREFIX) :] in enums
        ):
            merged = {k: v for k, v in enums[ref[len(REF_PREFIX) :]].items() if k != "title"}
            merged.update((k, _inline(v, enums)) for k, v in node.items() if k != "$ref")
            return merged
        return {k: _inline(v, enums) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, enums) for v in node]
    return node


def _referenced(components: dict[str, Any], key: str) -> bool:
    needle = f'"{REF_PREFIX}{key}"'.encode()
    return any(needle in msgspec.json.encode(v) for v in components.values())


# -- error messages ---------------------------------------------------------------------------

# msgspec's validation messages, parsed only when an argument is refused (compiled then).
