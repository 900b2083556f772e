"""A handler's signature: fast binding of arguments to its parameters (the JSON Schema its
type hints imply is `json_schema.py`'s).

All the work happens once, at decoration: the parameters become a msgspec Struct type and its
schema. A call is then one `msgspec.convert` (validation and conversion together) plus
`structs.asdict` for the keyword arguments.

Choices worth knowing:

* Unknown arguments are rejected (`additionalProperties: false` in the schema) unless the
  function takes `**kwargs`; then extra arguments pass through (validated by the `**kwargs`
  annotation if it has one). A tool with no parameters gets
  `{"type": "object", "properties": {}, "additionalProperties": false}`.
* Tools convert strictly: JSON `1` is fine for a float, `"1"` is not an int. Prompt and
  resource-template arguments arrive as strings and convert leniently (`"5"` → 5).
  A consequence of strictness: `dict[int, ...]` tool parameters cannot be satisfied (JSON
  object keys are strings); use `dict[str, ...]`.
* An explicit `input_schema=` is emitted verbatim and is not checked by `bind`: arguments must
  be an object, required parameters must be present, and only keys naming a parameter are
  passed (every key when the function takes `**kwargs`). Values are passed as received.
* Pydantic models work as parameter and return types; pydantic is imported only when such a
  model is met.
"""

from __future__ import annotations

import datetime
import functools
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import msgspec
from msgspec.structs import asdict as _asdict

from . import content as _content
from . import json_schema as _json_schema
from .context import Context
from .declared import (
    as_meta,
    declared_enums,
    field_default,
    is_declared_meta,
    is_field_info,
    restore_enum_order,
)
from .json_schema import ROOT_NAME, is_pydantic_model

__all__ = [
    "ArgumentError",
    "Signature",
    "tool_signature",
    "prompt_signature",
    "template_signature",
]

_convert = msgspec.convert
_ValidationError = msgspec.ValidationError
_EMPTY = inspect.Parameter.empty


class ArgumentError(Exception):
    """Arguments that do not fit the signature; str(exc) is a readable one-line message for a model."""


# -- the signature ------------------------------------------------------------------------------


class Signature:
    """What rondo knows about a handler's parameters and return value (built once)."""

    __slots__ = (
        "input_schema",
        "output_schema",
        "context_param",
        "is_async",
        "threaded",
        "param_names",
        "_struct",
        "_strict",
        "_dec_hook",
        "_extras",
        "_required",
        "_accepts_any",
    )

    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    context_param: str | None
    is_async: bool
    threaded: bool  # a blocking plain `def` the core runs in a worker thread (`thread=True`)
    param_names: tuple[str, ...]
    _struct: Any  # the msgspec Struct type of the parameters; None with an explicit schema
    _strict: bool
    _dec_hook: Callable[[Any, Any], Any] | None
    _extras: Any  # the **kwargs value type (Any when unannotated); None without **kwargs
    _required: tuple[str, ...]
    _accepts_any: bool

    def bind(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Validate + convert arguments into kwargs for the function (ctx not included)."""
        if arguments is None:
            arguments = {}
        elif type(arguments) is not dict:
            if not isinstance(arguments, Mapping):
                raise ArgumentError(
                    f"Invalid arguments: arguments must be an object, got {_json_type(arguments)}"
                )
            arguments = dict(arguments)
        if not arguments and not self.param_names:
            return {}  # nothing to take, nothing given (a tool of `ctx` alone): no conversion
        struct = self._struct
        if struct is None:
            return self._bind_explicit(arguments)
        try:
            if self._strict and self._dec_hook is None:
                # msgspec's defaults, left unsaid: keyword arguments cost it twice the call.
                kwargs = _asdict(_convert(arguments, struct))
            else:
                kwargs = _asdict(
                    _convert(arguments, struct, strict=self._strict, dec_hook=self._dec_hook)
                )
        except _ValidationError as exc:
            raise ArgumentError(explain(str(exc))) from None
        if self._extras is not None:
            self._bind_extras(arguments, kwargs)
        return kwargs

    def _bind_extras(self, arguments: dict[str, Any], kwargs: dict[str, Any]) -> None:
        # Only reached by functions taking **kwargs: the keys the Struct did not claim.
        extra_type = self._extras
        for key, value in arguments.items():
            if key in kwargs:
                continue
            if extra_type is Any:
                kwargs[key] = value
                continue
            try:
                kwargs[key] = _convert(
                    value, extra_type, strict=self._strict, dec_hook=self._dec_hook
                )
            except _ValidationError as exc:
                raise ArgumentError(explain(str(exc), prefix=key)) from None

    def _bind_explicit(self, arguments: dict[str, Any]) -> dict[str, Any]:
        for name in self._required:
            if name not in arguments:
                raise ArgumentError(f"Invalid arguments: missing required argument {name!r}")
        if self._accepts_any:
            return arguments.copy()
        names = self.param_names
        return {k: v for k, v in arguments.items() if k in names}

    def structure_output(self, value: Any) -> Any:
        """to_builtins of a return value that has an output schema (for structuredContent)."""
        return msgspec.to_builtins(value, enc_hook=_content.enc_hook)

    def __repr__(self) -> str:
        return f"<Signature ({', '.join(self.param_names)}) ctx={self.context_param}>"


def tool_signature(
    fn: Callable[..., Any],
    *,
    input_schema: dict[str, Any] | None = None,
    output_schema: dict[str, Any] | None = None,
) -> Signature:
    """The Signature of a tool handler; explicit schemas override the generated ones."""
    if input_schema is not None and (
        not isinstance(input_schema, dict) or input_schema.get("type") != "object"
    ):
        raise ValueError(f"{_name(fn)}: input_schema must be a JSON Schema with type 'object'")
    return _build(fn, strict=True, input_schema=input_schema, output_schema=output_schema)


def prompt_signature(fn: Callable[..., Any]) -> tuple[Signature, list[dict[str, Any]]]:
    """The Signature of a prompt handler and its `PromptArgument` list.

    Prompt arguments arrive as strings; parameters annotated int/float/bool convert from them.
    """
    sig = _build(fn, strict=False, input_schema=None, output_schema=None, with_output=False)
    for field in msgspec.structs.fields(sig._struct):
        if not _from_one_string(field.type):
            raise ValueError(
                f"{_name(fn)}: parameter {field.name!r} is annotated {_hint_text(field.type)}, but "
                "prompt arguments are strings: annotate it str (or int, float, bool, a Literal "
                "or an Enum, converted from the string) and parse anything richer yourself"
            )
    props = sig.input_schema.get("properties", {})
    required = set(sig.input_schema.get("required", ()))
    arguments: list[dict[str, Any]] = []
    for name in sig.param_names:
        argument: dict[str, Any] = {"name": name}
        prop = props.get(name, {})
        if "title" in prop:
            argument["title"] = prop["title"]
        if "description" in prop:
            argument["description"] = prop["description"]
        argument["required"] = name in required
        arguments.append(argument)
    return sig, arguments


_SCALARS = (str, int, float, bool, type(None))


def _from_one_string(tp: Any) -> bool:
    """Can a single string argument become this type (the prompt-argument rule)?"""
    if tp is Any or any(tp is t for t in _SCALARS):
        return True
    origin = get_origin(tp)
    if origin is Literal:
        return all(isinstance(v, (str, int, bool)) for v in get_args(tp))
    if origin is Annotated:
        return _from_one_string(get_args(tp)[0])
    if origin in (Union, types.UnionType):
        return all(_from_one_string(a) for a in get_args(tp))
    import enum

    return isinstance(tp, type) and issubclass(tp, enum.Enum)


def _hint_text(tp: Any) -> str:
    if get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    return tp.__name__ if isinstance(tp, type) else str(tp).replace("typing.", "")


def template_signature(fn: Callable[..., Any], variables: Sequence[str]) -> Signature:
    """The Signature of a resource-template handler whose parameters are the URI variables.

    Values arrive as strings from the URI and convert by the hints. A parameter that is not a
    template variable, or a variable with no parameter (unless `**kwargs`), is a ValueError.
    """
    sig = _build(fn, strict=False, input_schema=None, output_schema=None, with_output=False)
    params = set(sig.param_names)
    wanted = set(variables)
    unknown = sorted(params - wanted)
    if unknown:
        raise ValueError(
            f"{_name(fn)}: parameters {unknown} are not variables of the URI template "
            f"(variables: {sorted(wanted)})"
        )
    missing = sorted(wanted - params)
    if missing and sig._extras is None:
        raise ValueError(
            f"{_name(fn)}: URI template variables {missing} have no matching parameter"
        )
    return sig


# -- building ---------------------------------------------------------------------------------


def _build(
    fn: Callable[..., Any],
    *,
    strict: bool,
    input_schema: dict[str, Any] | None,
    output_schema: dict[str, Any] | None,
    with_output: bool = True,
) -> Signature:
    name = _name(fn)
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError, NameError) as exc:
        raise ValueError(f"{name}: cannot read the signature: {exc}") from None
    hints = _Hints(fn)

    context_param: str | None = None
    fields: list[tuple[Any, ...]] = []
    defaults: dict[str, Any] = {}
    extras: Any = None
    for param in params.values():
        if param.kind is param.VAR_POSITIONAL:
            continue
        hint = hints.get(param.name, param.annotation)
        if hints.is_context(param.name, param.annotation, hint):
            context_param = param.name
            continue
        if param.kind is param.VAR_KEYWORD:
            extras = Any if hint is _EMPTY else _prepare(hint)
            continue
        if param.kind is param.POSITIONAL_ONLY:
            raise ValueError(
                f"{name}: positional-only parameter {param.name!r} cannot receive an argument"
            )
        default, factory = param.default, None
        if is_field_info(default):
            # `n: int = Field(ge=1)`: the Field is metadata, its own default the default.
            hint = Annotated[(Any if hint is _EMPTY else hint), default]
            default = _EMPTY
        given = _field_of(hint)
        if given is not None and default is _EMPTY:
            declared, factory = field_default(given)
            if declared is not None:
                default = declared[0]
        try:
            tp = Any if hint is _EMPTY else _prepare(hint)
        except ValueError as exc:
            raise ValueError(f"{name}: parameter {param.name!r}: {exc}") from None
        if factory is not None:
            fields.append((param.name, tp, msgspec.field(default_factory=factory)))
        elif default is _EMPTY:
            fields.append((param.name, tp))
        else:
            fields.append((param.name, tp, _struct_default(default)))
            defaults[param.name] = default

    sig = Signature()
    sig.context_param = context_param
    sig.is_async = _is_async(fn)
    sig.threaded = False
    sig.param_names = tuple(f[0] for f in fields)
    sig._strict = strict
    sig._extras = extras
    sig._required = tuple(f[0] for f in fields if len(f) == 2)
    sig._accepts_any = extras is not None

    if input_schema is not None:
        sig._struct = None
        sig._dec_hook = None
        sig.input_schema = input_schema
    else:
        struct = msgspec.defstruct(
            ROOT_NAME, fields, kw_only=True, forbid_unknown_fields=extras is None
        )
        schema, uses_pydantic = _json_schema.input_schema(name, struct, fields, extras, defaults)
        schema = restore_enum_order(schema, declared_enums([f[1] for f in fields] + [extras]))
        sig._struct = struct
        sig._dec_hook = _dec_hook if uses_pydantic else None
        sig.input_schema = schema

    if output_schema is not None:
        sig.output_schema = output_schema
    elif with_output:
        sig.output_schema = _json_schema.output_schema(hints.get("return", _EMPTY))
    else:
        sig.output_schema = None
    return sig


def _field_of(hint: Any) -> Any:
    """The pydantic FieldInfo in `Annotated[T, Field(...)]`, if any."""
    if get_origin(hint) is Annotated:
        return next((m for m in get_args(hint)[1:] if is_field_info(m)), None)
    return None


def _name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def _is_async(fn: Any) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 - an object with an async __call__
    return call is not None and inspect.iscoroutinefunction(call)


def _struct_default(default: Any) -> Any:
    # msgspec refuses non-empty mutable defaults and must be able to encode a default into the
    # schema; a factory returning the very same object keeps Python's default semantics.
    if isinstance(default, (list, dict, set, bytearray)) and default:
        return msgspec.field(default_factory=_constant(default))
    try:
        msgspec.to_builtins(default)
    except (TypeError, msgspec.EncodeError):
        return msgspec.field(default_factory=_constant(default))
    return default


def _constant(value: Any) -> Callable[[], Any]:
    return lambda: value


# -- type hints -------------------------------------------------------------------------------

_CONTEXT_SOURCE = (
    r"\s*(?:Optional\[\s*)?(?:rondo\.(?:server\.context\.)?)?Context\s*\]?\s*(?:\|\s*None\s*)?"
)


def _is_context_text(raw: str) -> bool:
    # Compiled on first use (`re` keeps it): only unresolvable string annotations need it.
    return re.fullmatch(_CONTEXT_SOURCE, raw) is not None


class _Hints:
    """Resolved annotations, tolerating `from __future__ import annotations` and names that
    only exist under TYPE_CHECKING (the usual way to import Context)."""

    def __init__(self, fn: Any) -> None:
        self._fn = fn
        target = fn.func if isinstance(fn, functools.partial) else fn
        if not (inspect.isfunction(target) or inspect.ismethod(target)):
            target = getattr(target, "__call__", target)  # noqa: B004
        self._globals = getattr(inspect.unwrap(target), "__globals__", {})
        try:
            self._all: dict[str, Any] | None = typing.get_type_hints(target, include_extras=True)
        except Exception:
            self._all = None

    def get(self, name: str, raw: Any) -> Any:
        if raw is _EMPTY and name == "return":
            raw = self._raw_return()
        if self._all is not None and name in self._all:
            return self._all[name]
        if not isinstance(raw, str):
            return raw
        raw = _unquote(raw)
        if name != "return" and _is_context_text(raw):
            return Context
        try:
            return eval(raw, self._globals)  # what get_type_hints does, one name at a time
        except Exception as exc:
            if name == "return":
                return _EMPTY  # an unresolvable return type just means no output schema
            raise ValueError(
                f"{_name(self._fn)}: cannot resolve the annotation {raw!r} of {name!r}: {exc}"
            ) from None

    def _raw_return(self) -> Any:
        try:
            return inspect.signature(self._fn).return_annotation
        except (TypeError, ValueError):
            return _EMPTY

    def is_context(self, name: str, raw: Any, hint: Any) -> bool:
        if isinstance(raw, str) and (self._all is None or name not in self._all):
            return _is_context_text(_unquote(raw))
        return _is_context_type(hint)


def _unquote(raw: str) -> str:
    # `x: "int"` under `from __future__ import annotations` arrives as the text '"int"'.
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1].strip()
    return raw


def _is_context_type(hint: Any) -> bool:
    if isinstance(hint, type):
        return issubclass(hint, Context)
    if get_origin(hint) in (Union, types.UnionType):
        args = [a for a in get_args(hint) if a is not type(None)]
        return len(args) == 1 and _is_context_type(args[0])
    return False


# Compared by identity: hints may hold unhashable metadata (`Annotated[int, {...}]`).
_DATETIME_FORMATS = ((datetime.datetime, "date-time"), (datetime.time, "time"))


def _prepare(tp: Any) -> Any:
    """Rewrite a hint for msgspec: plain strings in Annotated become `Meta(description=...)`;
    datetime/time gain their JSON Schema `format` (msgspec leaves it out); `object` means
    what `Any` means (`dict[str, object]` and `dict[str, Any]` give the same schema)."""
    if tp is object:
        return Any
    for kind, fmt in _DATETIME_FORMATS:
        if tp is kind:
            return Annotated[tp, msgspec.Meta(extra_json_schema={"format": fmt})]
    origin = get_origin(tp)
    if origin is None or origin is Literal:
        return tp
    args = get_args(tp)
    if origin is Annotated:
        inner = _prepare(args[0])
        extras = list(args[1:])
        texts = [m for m in extras if isinstance(m, str)]
        declared = [m for m in extras if is_declared_meta(m)]
        if declared:
            # pydantic Field(...) / annotated_types constraints: honoured as msgspec's Meta is.
            extras = [as_meta(m) if is_declared_meta(m) else m for m in extras]
        if texts:
            # Before the other metadata so an explicit Meta(description=...) still wins.
            extras = [msgspec.Meta(description=" ".join(texts))] + [
                m for m in extras if not isinstance(m, str)
            ]
        if inner is args[0] and not texts and not declared:
            return tp
        return Annotated[(inner, *extras)]
    new = tuple(a if a is Ellipsis else _prepare(a) for a in args)
    if all(a is b for a, b in zip(new, args, strict=True)):
        return tp
    try:
        if origin in (Union, types.UnionType):
            return Union[new]  # noqa: UP007 - built from a tuple
        return origin[new]
    except TypeError:
        return tp


# -- schemas ----------------------------------------------------------------------------------


def _dec_hook(tp: Any, obj: Any) -> Any:
    if is_pydantic_model(tp):
        import pydantic

        try:
            return tp.model_validate(obj)
        except pydantic.ValidationError as exc:
            problems = []
            for err in exc.errors():
                loc = ".".join(str(p) for p in err.get("loc", ()))
                problems.append(f"{loc}: {err['msg']}" if loc else err["msg"])
            raise ValueError(f"invalid {tp.__name__} ({'; '.join(problems)})") from None
    raise NotImplementedError


_ERROR_SOURCES = {
    "field": r"Object (missing required|contains unknown) field `(.*)`",
    "expected": r"Expected `([^`]*)`(.*)",
    "location": r"(.*) - at ((?:`key` in )?`\$[^`]*`)",
}
_ERROR_PATTERNS: dict[str, re.Pattern[str]] = {}


def _error_pattern(name: str) -> re.Pattern[str]:
    compiled = _ERROR_PATTERNS.get(name)
    if compiled is None:
        compiled = _ERROR_PATTERNS[name] = re.compile(_ERROR_SOURCES[name], re.S)
    return compiled


def _json_type(value: Any) -> str:
    if isinstance(value, str):
        return "str"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__


def _path(location: str, prefix: str | None) -> str:
    """msgspec's "`$.a[0].b`" (or "`key` in `$.m`") as "a[0].b"; "" for the root."""
    loc = location.replace("`", "")
    key_of = loc.startswith("key in ")
    if key_of:
        loc = loc[len("key in ") :]
    if loc.startswith("$"):
        loc = loc[1:]
    loc = loc[1:] if loc.startswith(".") else loc
    if prefix:
        loc = prefix + ("" if not loc or loc.startswith("[") else ".") + loc
    if key_of:
        return f"a key of {loc}" if loc else "a key"
    return loc


def explain(message: str, *, prefix: str | None = None) -> str:
    """Rephrase a msgspec ValidationError message for a model reading it (one line)."""
    return "Invalid arguments: " + _explain(message, prefix).replace("\n", "\\n")


def _explain(message: str, prefix: str | None) -> str:
    located = _error_pattern("location").fullmatch(message)
    body, location = (located.group(1), located.group(2)) if located else (message, "")
    path = _path(location, prefix) if location or prefix else ""
    m = _error_pattern("field").fullmatch(body)
    if m:
        kind = "missing required" if m.group(1) == "missing required" else "unknown"
        if not path:
            return f"{kind} argument {m.group(2)!r}"
        return f"{kind} field {m.group(2)!r} in {path!r}"
    m = _error_pattern("expected").fullmatch(body)
    if m:
        if not path and m.group(1) == "object":
            got = m.group(2).replace("`", "").removeprefix(", got ")
            return f"arguments must be an object, got {got}"
        detail = f"expected {m.group(1)}{m.group(2).replace('`', '')}"
        return f"{path!r} {detail}" if path else detail
    detail = body.replace("`", "")
    detail = detail[:1].lower() + detail[1:]
    return f"{path!r}: {detail}" if path else detail
