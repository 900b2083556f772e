"""Form schemas from Python classes: a dataclass, TypedDict or msgspec Struct of primitives.

Imported only when `rondo.elicit.form` is given a class, so plain-dict users never pay for it.

| annotation | property |
|---|---|
| `str`, `int`, `float`, `bool` | string, integer, number, boolean |
| `Literal["a", "b"]`, a str-valued `enum.Enum` | single-select enum |
| `list[Literal[...]]`, `list[SomeEnum]` | multi-select enum |
| `X \\| None` | X, not required |
| `Annotated[X, "text"]` | X with that description |
| `Annotated[X, msgspec.Meta(...)]` | title, description, ge/le -> minimum/maximum, min_length/max_length -> minLength/maxLength (minItems/maxItems on lists), `extra_json_schema` merged in |

A field with a default is optional and carries it as `default`; a TypedDict's required keys
follow `total`/`Required`/`NotRequired`. The result still goes through the restricted-subset
check, so e.g. `extra_json_schema={"pattern": ...}` is refused like it would be in a dict.
"""

from __future__ import annotations

import enum
import types
import typing
from typing import Any

from .base import fail, join

_PRIMITIVES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def is_schema_class(obj: Any) -> bool:
    return isinstance(obj, type) and (
        hasattr(obj, "__dataclass_fields__")
        or typing.is_typeddict(obj)
        or hasattr(obj, "__struct_fields__")
    )


def schema_from_class(cls: type, path: str = "requestedSchema") -> dict[str, Any]:
    """The requested-schema dict for `cls` (unchecked; the caller runs the subset check)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, default, has_default in _fields(cls, hints):
        prop_path = join(join(path, "properties"), name)
        prop, nullable = _property(hints[name], prop_path)
        if has_default and default is not None:
            prop["default"] = _json_default(default)
        if not has_default and not nullable:
            required.append(name)
        properties[name] = prop
    if typing.is_typeddict(cls):
        required = [name for name in properties if _typeddict_requires(cls, name, hints[name])]
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _typeddict_requires(cls: Any, name: str, hint: Any) -> bool:
    # Under `from __future__ import annotations` Python 3.11 cannot see Required/NotRequired
    # when it builds __required_keys__, so the resolved hint has the last word.
    origin = typing.get_origin(hint)
    if origin is typing.NotRequired:
        return False
    if origin is typing.Required:
        return True
    return name in cls.__required_keys__


def _fields(cls: type, hints: dict[str, Any]) -> list[tuple[str, Any, bool]]:
    """(name, default, has_default) for each field, in declaration order."""
    if hasattr(cls, "__dataclass_fields__"):
        import dataclasses

        out = []
        for field in dataclasses.fields(cls):
            if field.default is not dataclasses.MISSING:
                out.append((field.name, field.default, True))
            elif field.default_factory is not dataclasses.MISSING:
                out.append((field.name, field.default_factory(), True))
            else:
                out.append((field.name, None, False))
        return out
    if hasattr(cls, "__struct_fields__"):
        import msgspec

        out = []
        for info in msgspec.structs.fields(cls):
            if info.default is not msgspec.NODEFAULT:
                out.append((info.name, info.default, True))
            elif info.default_factory is not msgspec.NODEFAULT:
                out.append((info.name, info.default_factory(), True))
            else:
                out.append((info.name, None, False))
        return out
    # TypedDict: no defaults; requiredness is fixed up by the caller from __required_keys__.
    return [(name, None, False) for name in hints]


def _property(hint: Any, path: str) -> tuple[dict[str, Any], bool]:
    """The property schema for one annotation, and whether None is allowed."""
    extras: list[Any] = []
    nullable = False
    hint = _strip_required(hint)
    # Peel `Annotated[...]` and `... | None` in whichever order they were written.
    while True:
        origin = typing.get_origin(hint)
        if origin is typing.Annotated:
            hint, *more = typing.get_args(hint)
            extras.extend(more)
        elif origin in (typing.Union, types.UnionType) and not nullable:
            hint, nullable = _strip_none(hint, path)
        else:
            break
    prop = _base(hint, path)
    for extra in extras:
        _apply(prop, extra, path)
    return prop, nullable


def _strip_required(hint: Any) -> Any:
    if typing.get_origin(hint) in (typing.Required, typing.NotRequired):
        return typing.get_args(hint)[0]
    return hint


def _strip_none(hint: Any, path: str) -> tuple[Any, bool]:
    members = [arg for arg in typing.get_args(hint) if arg is not type(None)]
    if len(members) != 1:
        raise fail(path, f"unions other than `X | None` are not supported ({hint!r})")
    return members[0], True


def _base(hint: Any, path: str) -> dict[str, Any]:
    if hint in _PRIMITIVES:
        return {"type": _PRIMITIVES[hint]}
    choices = _choices(hint)
    if choices is not None:
        return {"type": "string", "enum": choices}
    if typing.get_origin(hint) in (list, tuple, set, frozenset):
        args = typing.get_args(hint)
        item = args[0] if args else None
        choices = _choices(item)
        if choices is None:
            raise fail(path, "lists must be of Literal strings or a str Enum (multi-select)")
        return {"type": "array", "items": {"type": "string", "enum": choices}}
    nested = isinstance(hint, type) and hasattr(hint, "__annotations__") and hint not in (str, int, float, bool)
    advice = "; forms are flat: put its fields in the form itself" if nested else ""
    raise fail(
        path, f"type {hint!r} is not a form primitive (str, int, float, bool, Literal, list){advice}"
    )


def _choices(hint: Any) -> list[str] | None:
    if typing.get_origin(hint) is typing.Literal:
        values = list(typing.get_args(hint))
    elif isinstance(hint, type) and issubclass(hint, enum.Enum):
        values = [member.value for member in hint]
    else:
        return None
    # Non-string choices fall through to the subset check, which names the path.
    return values


def _apply(prop: dict[str, Any], extra: Any, path: str) -> None:
    if isinstance(extra, str):
        prop["description"] = extra
        return
    if type(extra).__name__ != "Meta" or type(extra).__module__.split(".")[0] != "msgspec":
        return  # foreign metadata (validators from other libraries) is not ours to read
    is_list = prop["type"] == "array"
    mapping = {
        "title": "title",
        "description": "description",
        "ge": "minimum",
        "le": "maximum",
        "min_length": "minItems" if is_list else "minLength",
        "max_length": "maxItems" if is_list else "maxLength",
    }
    for attr, key in mapping.items():
        value = getattr(extra, attr, None)
        if value is not None:
            prop[key] = value
    for attr in ("gt", "lt", "multiple_of", "pattern"):
        if getattr(extra, attr, None) is not None:
            raise fail(path, f"msgspec.Meta({attr}=...) has no equivalent in a form schema")
    extra_schema = getattr(extra, "extra_json_schema", None)
    if extra_schema:
        prop.update(extra_schema)


def _json_default(value: Any) -> Any:
    # Wrong-typed defaults are left for the subset check, which names the path.
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, list | tuple | set | frozenset):
        return [item.value if isinstance(item, enum.Enum) else item for item in value]
    return value
