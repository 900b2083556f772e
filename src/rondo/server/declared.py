"""What a handler's hints declare that msgspec alone would lose: pydantic `Field(...)` (and
`annotated_types`) constraints on a parameter, and the declared order of enum values.

`Field(ge=1, description=...)` becomes the equivalent `msgspec.Meta`, so it is both validated and
in the schema, exactly like `Meta` itself. A Field option with no schema/validation equivalent
here (an alias, `strict`, a discriminator...) is refused when the tool is registered rather
than ignored. msgspec sorts enum values; `restore_enum_order` puts them back in declared order.
Nothing here imports pydantic: its objects are recognised by their class.
"""

from __future__ import annotations

import enum
import typing
from collections.abc import Iterable
from typing import Annotated, Any, Literal, get_args, get_origin

import msgspec

_CONSTRAINTS = ("gt", "ge", "lt", "le", "multiple_of", "min_length", "max_length", "pattern")
_TEXTS = ("title", "description", "examples")
# FieldInfo attributes a parameter may set (constraints live in `.metadata`).
_FIELD_OPTIONS = frozenset({*_TEXTS, "json_schema_extra", "default", "default_factory"})


def is_field_info(obj: Any) -> bool:
    kind = type(obj)
    return kind.__name__ == "FieldInfo" and kind.__module__.startswith("pydantic")


def _is_constraint(obj: Any) -> bool:
    kind = type(obj)
    return kind.__module__ == "annotated_types" or kind.__name__ == "_PydanticGeneralMetadata"


def is_declared_meta(obj: Any) -> bool:
    """Metadata in `Annotated[...]` that `as_meta` turns into a `msgspec.Meta`."""
    return is_field_info(obj) or _is_constraint(obj)


def _attributes(item: Any) -> dict[str, Any]:
    import dataclasses  # only for values that may be dataclasses (not on a server's start)

    if dataclasses.is_dataclass(item):
        return {f.name: getattr(item, f.name) for f in dataclasses.fields(item)}
    return dict(getattr(item, "__dict__", {}))


def _constraints(item: Any, into: dict[str, Any]) -> None:
    found = {k: v for k, v in _attributes(item).items() if v is not None}
    unknown = sorted(set(found) - set(_CONSTRAINTS))
    if unknown or not found:
        raise ValueError(f"{item!r} is not supported on a parameter (supported: {', '.join(_CONSTRAINTS)})")
    into.update(found)


def as_meta(item: Any) -> msgspec.Meta:
    """The `msgspec.Meta` equivalent of a pydantic FieldInfo or an annotated_types constraint."""
    kwargs: dict[str, Any] = {}
    if not is_field_info(item):
        _constraints(item, kwargs)
        return msgspec.Meta(**kwargs)
    unknown = sorted(set(getattr(item, "_attributes_set", {})) - _FIELD_OPTIONS)
    if unknown:
        raise ValueError(
            f"pydantic Field option(s) {', '.join(unknown)} have no effect on a tool parameter; "
            f"use only {', '.join(sorted(_FIELD_OPTIONS))} and constraints ({', '.join(_CONSTRAINTS)})"
        )
    for key in _TEXTS:
        value = getattr(item, key, None)
        if value is not None:
            kwargs[key] = value
    extra = getattr(item, "json_schema_extra", None)
    if isinstance(extra, dict):
        kwargs["extra_json_schema"] = dict(extra)
    elif extra is not None:
        raise ValueError("pydantic Field(json_schema_extra=...) must be a dict on a tool parameter")
    for constraint in getattr(item, "metadata", ()):
        _constraints(constraint, kwargs)
    return msgspec.Meta(**kwargs)


def field_default(item: Any) -> tuple[Any, Any]:
    """(default, default_factory) a FieldInfo declares; `None` for each it does not."""
    default = getattr(item, "default", None)
    if type(default).__name__ == "PydanticUndefinedType" or default is Ellipsis:
        default = None
    else:
        default = (default,)
    return default, getattr(item, "default_factory", None)


# -- enum order -------------------------------------------------------------------------------


def declared_enums(hints: Iterable[Any]) -> list[list[Any]]:
    """Every Literal's and Enum's values, in declared order, found anywhere in `hints`."""
    found: list[list[Any]] = []
    seen: set[int] = set()

    def walk(tp: Any) -> None:
        if id(tp) in seen:
            return
        seen.add(id(tp))
        origin = get_origin(tp)
        if origin is Literal:
            found.append(list(get_args(tp)))
            return
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            found.append([member.value for member in tp])
            return
        if origin is Annotated:
            walk(get_args(tp)[0])
            return
        for arg in get_args(tp):
            walk(arg)
        if isinstance(tp, type) and (
            hasattr(tp, "__dataclass_fields__") or issubclass(tp, msgspec.Struct) or typing.is_typeddict(tp)
        ):
            try:
                members = typing.get_type_hints(tp, include_extras=True)
            except Exception:
                return
            for member in members.values():
                walk(member)

    for hint in hints:
        walk(hint)
    return found


def _key(values: list[Any]) -> tuple[Any, ...]:
    return tuple(sorted((type(v).__name__, repr(v)) for v in values))


def restore_enum_order(schema: dict[str, Any], declared: list[list[Any]]) -> dict[str, Any]:
    """`schema` with every `enum` list whose values match a declared one in declared order."""
    if not declared:
        return schema
    orders: dict[tuple[Any, ...], list[Any]] = {}
    for values in declared:
        orders.setdefault(_key(values), values)

    def fix(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: fix(v) for k, v in node.items()}
            values = out.get("enum")
            if isinstance(values, list):
                order = orders.get(_key(values))
                if order is not None:
                    out["enum"] = list(order)
            return out
        if isinstance(node, list):
            return [fix(v) for v in node]
        return node

    fixed: dict[str, Any] = fix(schema)
    return fixed
