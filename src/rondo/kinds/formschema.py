"""The restricted, flat JSON Schema subset form elicitation allows, and answers checked against it.

A requested schema is `{"type": "object", "properties": {name: primitive}, "required": [...]}`
where each primitive is a string (optionally with a format), a number or integer, a boolean, or a
single/multi-select enum, titled or not. Any other keyword, type or nesting is refused: clients
only promise to render this subset, so accepting more would only fail later, at the user.

Format checks are syntactic, not full RFC validation:
- `email`: `local@domain`, one `@`, no whitespace, no empty or dot-edged labels.
- `uri`: an absolute URI (`scheme:` then no whitespace, controls, or `<>"{}|\\^``), with
  well-formed `%XX` escapes.
- `date`: RFC 3339 full-date `YYYY-MM-DD` naming a real calendar day.
- `date-time`: RFC 3339 `YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)`, ranges checked, second 60
  allowed (leap second).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .base import (
    expect_count,
    expect_list,
    expect_number,
    expect_object,
    expect_string,
    fail,
    is_number,
    join,
    json_type,
    reject_unknown,
)

FORMATS = ("email", "uri", "date", "date-time")

_TOP_KEYS = frozenset({"$schema", "type", "properties", "required"})
_COMMON = frozenset({"type", "title", "description", "default"})
_STRING_KEYS = _COMMON | {"minLength", "maxLength", "format"}
_ENUM_KEYS = _COMMON | {"enum", "enumNames"}
_TITLED_KEYS = _COMMON | {"oneOf"}
_NUMBER_KEYS = _COMMON | {"minimum", "maximum"}
_BOOLEAN_KEYS = _COMMON
_ARRAY_KEYS = _COMMON | {"minItems", "maxItems", "items"}
_OPTION_KEYS = frozenset({"const", "title"})


# -- the requested schema ----------------------------------------------------------------------


def check_requested_schema(schema: Any, path: str = "requestedSchema") -> None:
    """Raise ValueError naming the path of the first thing outside the allowed subset."""
    schema = expect_object(schema, path)
    reject_unknown(schema, _TOP_KEYS, path)
    if "$schema" in schema:
        expect_string(schema["$schema"], join(path, "$schema"))
    if schema.get("type") != "object":
        raise fail(join(path, "type"), 'must be "object"')
    if "properties" not in schema:
        raise fail(join(path, "properties"), "is required")
    props = expect_object(schema["properties"], join(path, "properties"))
    for name, prop in props.items():
        if not isinstance(name, str) or not name:
            raise fail(join(path, "properties"), "property names must be non-empty strings")
        check_property(prop, join(join(path, "properties"), name))
    if "required" in schema:
        req_path = join(path, "required")
        required = expect_list(schema["required"], req_path)
        seen: set[str] = set()
        for index, name in enumerate(required):
            item_path = join(req_path, index)
            expect_string(name, item_path)
            if name not in props:
                raise fail(item_path, f"names {name!r}, which is not in properties")
            if name in seen:
                raise fail(item_path, f"repeats {name!r}")
            seen.add(name)


def check_property(prop: Any, path: str) -> None:
    prop = expect_object(prop, path)
    if "type" not in prop:
        raise fail(join(path, "type"), "is required")
    kind = prop["type"]
    if kind == "string":
        if "enum" in prop:
            reject_unknown(prop, _ENUM_KEYS, path)
            _check_enum(prop, path)
        elif "oneOf" in prop:
            reject_unknown(prop, _TITLED_KEYS, path)
            _check_options(prop["oneOf"], join(path, "oneOf"))
        else:
            reject_unknown(prop, _STRING_KEYS, path)
            _check_string_bounds(prop, path)
    elif kind in ("number", "integer"):
        reject_unknown(prop, _NUMBER_KEYS, path)
        _check_number_bounds(prop, path)
    elif kind == "boolean":
        reject_unknown(prop, _BOOLEAN_KEYS, path)
    elif kind == "array":
        reject_unknown(prop, _ARRAY_KEYS, path)
        _check_multi_select(prop, path)
    elif kind == "object" or "properties" in prop:
        # The usual first mistake: forms are flat, one level of fields.
        raise fail(
            join(path, "type"),
            "a form field cannot be a nested object (forms are flat: each field is a string, "
            "number, integer, boolean or a multi-select array); flatten its fields into the "
            "form, or ask a second question",
        )
    else:
        raise fail(
            join(path, "type"),
            f"must be one of string, number, integer, boolean, array; got {kind!r}",
        )
    for key in ("title", "description"):
        if key in prop:
            expect_string(prop[key], join(path, key))
    if "default" in prop:
        check_value(prop, prop["default"], join(path, "default"))


def _check_string_bounds(prop: Mapping[str, Any], path: str) -> None:
    low = expect_count(prop["minLength"], join(path, "minLength")) if "minLength" in prop else None
    high = expect_count(prop["maxLength"], join(path, "maxLength")) if "maxLength" in prop else None
    if low is not None and high is not None and low > high:
        raise fail(join(path, "maxLength"), "must not be less than minLength")
    if "format" in prop and prop["format"] not in FORMATS:
        raise fail(join(path, "format"), f"must be one of {', '.join(FORMATS)}")


def _check_number_bounds(prop: Mapping[str, Any], path: str) -> None:
    low = expect_number(prop["minimum"], join(path, "minimum")) if "minimum" in prop else None
    high = expect_number(prop["maximum"], join(path, "maximum")) if "maximum" in prop else None
    if low is not None and high is not None and low > high:
        raise fail(join(path, "maximum"), "must not be less than minimum")


def _check_enum(prop: Mapping[str, Any], path: str) -> None:
    values = _check_choices(prop["enum"], join(path, "enum"))
    if "enumNames" in prop:
        names_path = join(path, "enumNames")
        names = expect_list(prop["enumNames"], names_path)
        for index, name in enumerate(names):
            expect_string(name, join(names_path, index))
        if len(names) != len(values):
            raise fail(names_path, "must have one name per enum value")


def _check_choices(values: Any, path: str) -> list[str]:
    values = expect_list(values, path)
    if not values:
        raise fail(path, "must not be empty")
    seen: set[str] = set()
    for index, value in enumerate(values):
        expect_string(value, join(path, index))
        if value in seen:
            raise fail(join(path, index), f"repeats {value!r}")
        seen.add(value)
    return list(values)


def _check_options(options: Any, path: str) -> None:
    options = expect_list(options, path)
    if not options:
        raise fail(path, "must not be empty")
    seen: set[str] = set()
    for index, option in enumerate(options):
        opt_path = join(path, index)
        option = expect_object(option, opt_path)
        reject_unknown(option, _OPTION_KEYS, opt_path)
        for key in ("const", "title"):
            if key not in option:
                raise fail(join(opt_path, key), "is required")
            expect_string(option[key], join(opt_path, key))
        if option["const"] in seen:
            raise fail(join(opt_path, "const"), f"repeats {option['const']!r}")
        seen.add(option["const"])


def _check_multi_select(prop: Mapping[str, Any], path: str) -> None:
    items_path = join(path, "items")
    if "items" not in prop:
        raise fail(items_path, "is required")
    items = expect_object(prop["items"], items_path)
    if "anyOf" in items:
        reject_unknown(items, frozenset({"anyOf"}), items_path)
        _check_options(items["anyOf"], join(items_path, "anyOf"))
    else:
        reject_unknown(items, frozenset({"type", "enum"}), items_path)
        if items.get("type") != "string":
            raise fail(join(items_path, "type"), 'must be "string"')
        if "enum" not in items:
            raise fail(join(items_path, "enum"), "is required")
        _check_choices(items["enum"], join(items_path, "enum"))
    low = expect_count(prop["minItems"], join(path, "minItems")) if "minItems" in prop else None
    high = expect_count(prop["maxItems"], join(path, "maxItems")) if "maxItems" in prop else None
    if low is not None and high is not None and low > high:
        raise fail(join(path, "maxItems"), "must not be less than minItems")


# -- answers (and defaults) against a checked schema ---------------------------------------------


def check_content(schema: Mapping[str, Any], content: Any, path: str = "content") -> dict[str, Any]:
    """Check accepted form content against a valid requested schema; return the known fields.

    Fields the schema does not define are ignored and left out of the result, so a handler only
    ever sees what it asked for. Integral floats for `integer` fields come back as `int`.
    """
    if type(content) is not dict:
        content = expect_object(content, path)
    props: Mapping[str, Any] = schema["properties"]
    clean: dict[str, Any] = {}
    for name, prop in props.items():
        if name in content:
            # join(path, name), without the call: names are strings here
            clean[name] = check_value(prop, content[name], f"{path}.{name}" if path else name)
    for name in schema.get("required", ()):
        if name not in clean:
            raise fail(join(path, name), "is required")
    return clean


def check_value(prop: Mapping[str, Any], value: Any, path: str) -> Any:
    """Check one field's value against its (valid) primitive schema; return it normalised."""
    kind = prop["type"]
    if kind == "string":
        if not isinstance(value, str):
            raise fail(path, f"must be a string, got {json_type(value)}")
        if "enum" in prop:
            if value not in prop["enum"]:
                raise fail(path, f"must be one of {_show(prop['enum'])}")
        elif "oneOf" in prop:
            allowed = [option["const"] for option in prop["oneOf"]]
            if value not in allowed:
                raise fail(path, f"must be one of {_show(allowed)}")
        else:
            _check_string(prop, value, path)
        return value
    if kind == "boolean":
        if not isinstance(value, bool):
            raise fail(path, f"must be a boolean, got {json_type(value)}")
        return value
    if kind in ("number", "integer"):
        return _check_number(prop, value, path)
    return _check_selection(prop, value, path)


def _check_string(prop: Mapping[str, Any], value: str, path: str) -> None:
    if "minLength" in prop and len(value) < prop["minLength"]:
        raise fail(path, f"must be at least {prop['minLength']} characters long")
    if "maxLength" in prop and len(value) > prop["maxLength"]:
        raise fail(path, f"must be at most {prop['maxLength']} characters long")
    fmt = prop.get("format")
    if fmt is not None and not FORMAT_CHECKS[fmt](value):
        raise fail(path, f"is not a valid {fmt}")


def _check_number(prop: Mapping[str, Any], value: Any, path: str) -> int | float:
    if not is_number(value):
        raise fail(path, f"must be a number, got {json_type(value)}")
    number: int | float = value
    if prop["type"] == "integer" and isinstance(number, float):
        # JSON Schema counts 3.0 as an integer; hand the handler a real int.
        if not number.is_integer():
            raise fail(path, "must be an integer")
        number = int(number)
    if "minimum" in prop and number < prop["minimum"]:
        raise fail(path, f"must be at least {prop['minimum']}")
    if "maximum" in prop and number > prop["maximum"]:
        raise fail(path, f"must be at most {prop['maximum']}")
    return number


def _check_selection(prop: Mapping[str, Any], value: Any, path: str) -> list[str]:
    if not isinstance(value, list | tuple):
        raise fail(path, f"must be an array, got {json_type(value)}")
    items = prop["items"]
    allowed = [option["const"] for option in items["anyOf"]] if "anyOf" in items else items["enum"]
    seen: set[str] = set()
    for index, item in enumerate(value):
        if not isinstance(item, str) or item not in allowed:
            raise fail(join(path, index), f"must be one of {_show(allowed)}")
        if item in seen:
            raise fail(join(path, index), f"repeats {item!r}")
        seen.add(item)
    if "minItems" in prop and len(value) < prop["minItems"]:
        raise fail(path, f"must select at least {prop['minItems']}")
    if "maxItems" in prop and len(value) > prop["maxItems"]:
        raise fail(path, f"must select at most {prop['maxItems']}")
    return list(value)


def _show(values: Any) -> str:
    shown = ", ".join(repr(v) for v in list(values)[:10])
    return f"[{shown}{', ...' if len(values) > 10 else ''}]"


# -- formats: syntactic checks, documented in the module docstring ----------------------------

_LABEL = r"[^\s@.]+"
# Compiled on first use: compiling regular expressions at import would tax every stdio
# server's cold start, and most never check a format.
_SOURCES = {
    "email": rf"{_LABEL}(?:\.{_LABEL})*@{_LABEL}(?:\.{_LABEL})*",
    "uri": r"[A-Za-z][A-Za-z0-9+.\-]*:[^\s<>\"{}|\\^`\x00-\x1f\x7f]*",
    "bad-escape": r"%(?![0-9A-Fa-f]{2})",
    "date": r"(\d{4})-(\d{2})-(\d{2})",
    "date-time": r"(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+\-](\d{2}):(\d{2}))",
}
_COMPILED: dict[str, re.Pattern[str]] = {}


def _pattern(name: str) -> re.Pattern[str]:
    compiled = _COMPILED.get(name)
    if compiled is None:
        compiled = _COMPILED[name] = re.compile(_SOURCES[name])
    return compiled

_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_email(value: str) -> bool:
    return _pattern("email").fullmatch(value) is not None


def is_uri(value: str) -> bool:
    return _pattern("uri").fullmatch(value) is not None and _pattern("bad-escape").search(value) is None


def is_date(value: str) -> bool:
    match = _pattern("date").fullmatch(value)
    if match is None:
        return False
    year, month, day = (int(part) for part in match.groups())
    if not 1 <= month <= 12 or day < 1:
        return False
    if month == 2 and day == 29:
        return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return day <= _DAYS[month - 1]


def is_date_time(value: str) -> bool:
    match = _pattern("date-time").fullmatch(value)
    if match is None or not is_date(match.group(1)):
        return False
    hour, minute, second = int(match.group(2)), int(match.group(3)), int(match.group(4))
    if hour > 23 or minute > 59 or second > 60:
        return False
    if match.group(5) is not None:
        return int(match.group(5)) <= 23 and int(match.group(6)) <= 59
    return True


FORMAT_CHECKS = {"email": is_email, "uri": is_uri, "date": is_date, "date-time": is_date_time}
