"""One operation of the document in two passes: `read` (cheap, at build) finds its parameters
and body as tool arguments, what a call needs to send, and which raw schemas make up its input
and output schemas (a `Plan`); `translate` turns a plan into those schemas, on first need."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import Unsupported
from .refs import deref
from .schemas import Translator

METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
LOCATIONS = ("path", "query", "header", "cookie")
_IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})  # OpenAPI: ignored
_DEFAULT_STYLE = {"path": "simple", "query": "form", "header": "simple", "cookie": "form"}
_STYLES = {
    "path": ("simple", "label", "matrix"),
    "query": ("form", "spaceDelimited", "pipeDelimited", "deepObject"),
    "header": ("simple",),
    "cookie": ("form",),
}
FORM = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"


@dataclass
class Param:
    name: str  # as sent
    arg: str  # the tool argument
    location: str
    required: bool
    style: str
    explode: bool
    multi_segment: bool = False  # a path parameter that may hold `/` (x-multi-segment)
    as_json: bool = False  # declared with `content: application/json`
    allow_reserved: bool = False


@dataclass
class Body:
    media_type: str
    required: bool
    fields: dict[str, str] | None  # argument -> property, when the object is flattened
    arg: str | None  # the one argument holding the whole body otherwise
    binary: frozenset[str] = frozenset()  # multipart properties sent as files


@dataclass
class Operation:
    """What the route rules and the `customize` hook see; the hook may change `name`,
    `description`, `kind` ("tool", "resource", "template", "exclude"), `confirm` and `title`."""

    method: str  # upper case
    path: str
    operation_id: str | None
    name: str
    title: str | None
    description: str
    tags: tuple[str, ...]
    kind: str = "tool"
    confirm: bool = False
    deprecated: bool = False
    params: list[Param] = field(default_factory=list)
    body: Body | None = None
    input_schema: dict[str, Any] = field(default_factory=dict)
    output_schema: dict[str, Any] | None = None

    def arguments(self) -> set[str]:
        """The tool arguments: the parameters' and the body's (its properties, or one)."""
        known = {p.arg for p in self.params}
        if self.body is not None and self.body.fields is not None:
            known.update(self.body.fields)
        elif self.body is not None and self.body.arg is not None:
            known.add(self.body.arg)
        return known


@dataclass
class Plan:
    """An operation's schemas, untranslated: per argument (in order) its raw schema, the
    description a parameter adds, or a ready schema (a text body); the required arguments; the
    raw output schema (None: no output schema)."""

    args: list[tuple[str, Any, str | None, dict[str, Any] | None]] = field(default_factory=list)
    required: list[str] = field(default_factory=list)
    output: Any = None


def translate(tr: Translator, plan: Plan) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The input schema and output schema a plan describes. `Unsupported` (or, for a shape the
    document's schema forbids, TypeError and the like) when an input schema cannot be made; an
    output schema that cannot be made is None (calls work; the result is just not described)."""
    props: dict[str, Any] = {}
    refs: set[str] = set()
    for arg, raw, description, ready in plan.args:
        if ready is not None:
            props[arg] = ready
            continue
        translated = tr.translate(raw, refs)
        if description is not None and isinstance(translated, dict):
            translated = {**translated, "description": description}
        props[arg] = translated
    whole: dict[str, Any] = {"type": "object", "properties": props}
    if plan.required:
        whole["required"] = list(plan.required)
    whole["additionalProperties"] = False
    if refs:
        whole["$defs"] = tr.defs_for(refs)
    output = None
    if plan.output is not None:
        try:
            output = tr.schema(plan.output)
        except Unsupported:
            output = None
    return whole, output


def describe(op: dict[str, Any]) -> tuple[str | None, str]:
    summary = op.get("summary") if isinstance(op.get("summary"), str) else None
    text = op.get("description") if isinstance(op.get("description"), str) else ""
    if summary and text and summary.strip() != text.strip():
        return summary, f"{summary}\n\n{text}"
    return summary, (text or summary or "")


def read(doc: dict[str, Any], tr: Translator, path: str, method: str, item: dict[str, Any],
         op: dict[str, Any], name: str) -> tuple[Operation, Plan]:
    """The Operation for `method path` and the plan of its schemas, without translating any
    schema; `Unsupported` names what cannot be served."""
    summary, description = describe(op)
    raw_tags = op.get("tags")
    tags = tuple(t for t in raw_tags if isinstance(t, str)) if isinstance(raw_tags, list) else ()
    result = Operation(method.upper(), path, op.get("operationId"), name, summary, description,
                       tags, deprecated=bool(op.get("deprecated")))
    plan = Plan()
    required = plan.required
    taken: set[str] = set()

    def arg_for(wanted: str, suffix: str) -> str:
        arg = wanted if wanted not in taken else f"{wanted}_{suffix}"
        n = 2
        while arg in taken:
            arg, n = f"{wanted}_{suffix}{n}", n + 1
        taken.add(arg)
        return arg

    merged: dict[tuple[str, str], dict[str, Any]] = {}
    shared, own = item.get("parameters") or [], op.get("parameters") or []
    if not isinstance(shared, list) or not isinstance(own, list):
        raise Unsupported("'parameters' must be a list")
    for raw in [*shared, *own]:
        param = deref(doc, raw)
        if not isinstance(param, dict) or not isinstance(param.get("name"), str):
            raise Unsupported("a parameter without a name")
        merged[(param["name"], param.get("in", ""))] = param  # the operation's own wins
    ordered = sorted(merged.values(), key=lambda p: LOCATIONS.index(p["in"])
                     if p.get("in") in LOCATIONS else 9)
    for param in ordered:
        where = param.get("in")
        if where not in LOCATIONS:
            raise Unsupported(f"parameter {param['name']!r} in {where!r}")
        if where == "header" and param["name"].lower() in _IGNORED_HEADERS:
            continue
        style = param.get("style", _DEFAULT_STYLE[where])
        if style not in _STYLES[where]:
            raise Unsupported(f"{where} parameter {param['name']!r} with style {style!r}")
        as_json = False
        if "schema" in param:
            schema = param["schema"]
        elif isinstance(param.get("content"), dict) and param["content"]:
            media, entry = next(iter(param["content"].items()))
            if "json" not in media:
                raise Unsupported(f"parameter {param['name']!r} with content {media!r}")
            schema, as_json = (entry or {}).get("schema", {}), True
        else:
            schema = {}
        described = param.get("description")
        is_required = where == "path" or bool(param.get("required"))
        arg = arg_for(param["name"], where)
        plan.args.append((arg, schema, described if isinstance(described, str) else None, None))
        if is_required:
            required.append(arg)
        result.params.append(Param(
            param["name"], arg, where, is_required, style,
            bool(param.get("explode", style == "form")), bool(param.get("x-multi-segment")),
            as_json, bool(param.get("allowReserved")),
        ))
    for segment in _template_names(path):
        if not any(p.location == "path" and p.name == segment for p in result.params):
            raise Unsupported(f"path variable {{{segment}}} has no parameter")

    if "requestBody" in op:
        result.body = _body(doc, tr, deref(doc, op["requestBody"]), plan, arg_for)
    plan.output = _output(doc, op)
    return result, plan


def _template_names(path: str) -> list[str]:
    names, rest = [], path
    while "{" in rest:
        start = rest.index("{")
        end = rest.find("}", start)
        if end < 0:
            raise Unsupported(f"path {path!r} has an unclosed '{{'")
        names.append(rest[start + 1 : end])
        rest = rest[end + 1 :]
    return names


def pick_media(content: dict[str, Any]) -> str:
    types = list(content)
    plain = [media.split(";")[0].strip().lower() for media in types]
    for wanted in ("json", FORM, MULTIPART, "text/", "application/octet-stream"):
        for media, kind in zip(types, plain, strict=True):
            if (kind == "application/json" or kind.endswith("+json")) if wanted == "json" \
                    else kind.startswith(wanted) if wanted == "text/" else kind == wanted:
                return media
    raise Unsupported(f"request body types {', '.join(types) or '(none)'}")


def _body(doc: dict[str, Any], tr: Translator, body: Any, plan: Plan,
          arg_for: Callable[[str, str], str]) -> Body:
    if not isinstance(body, dict) or not isinstance(body.get("content"), dict):
        raise Unsupported("a requestBody without content")
    media = pick_media(body["content"])
    kind = media.split(";")[0].strip().lower()
    entry = deref(doc, body["content"][media]) or {}
    raw_schema = entry.get("schema", {}) if isinstance(entry, dict) else {}
    is_required = bool(body.get("required"))
    structured = kind.endswith("json") or kind in (FORM, MULTIPART)
    resolved = tr.resolve(raw_schema) if structured else None
    flat = (isinstance(resolved, dict) and isinstance(resolved.get("properties"), dict)
            and resolved["properties"]
            and not any(k in resolved for k in ("allOf", "oneOf", "anyOf", "not"))
            and resolved.get("additionalProperties") in (None, False))
    if flat:
        assert isinstance(resolved, dict)
        fields: dict[str, str] = {}
        wanted = set(resolved.get("required", ())) if is_required else set()
        binary = set()
        for prop, prop_schema in resolved["properties"].items():
            arg = arg_for(prop, "body")
            fields[arg] = prop
            plan.args.append((arg, prop_schema, None, None))
            if prop in wanted:
                plan.required.append(arg)
            looked = tr.resolve(prop_schema)
            if kind == MULTIPART and isinstance(looked, dict) and (
                    looked.get("format") in ("binary", "byte") or "contentMediaType" in looked):
                binary.add(prop)
        return Body(media, is_required, fields, None, frozenset(binary))
    arg = arg_for("body", "arg")
    if structured:
        plan.args.append((arg, raw_schema, None, None))
    else:
        plan.args.append((arg, None, None, {"type": "string", "description": f"the {kind} body"}))
    if is_required:
        plan.required.append(arg)
    return Body(media, is_required, None, arg)


def _output(doc: dict[str, Any], op: dict[str, Any]) -> Any:
    """The raw output schema: the JSON schema every documented success answers with. None when
    a 2xx answer may carry no JSON (a 204, say), or successes differ: the server must not
    promise structured content a successful call cannot give."""
    responses = op.get("responses")
    if not isinstance(responses, dict):
        return None
    found: list[Any] = []
    for code in sorted(str(c) for c in responses):
        if not code.startswith("2"):
            continue
        response = deref(doc, responses[next(c for c in responses if str(c) == code)])
        content = response.get("content") if isinstance(response, dict) else None
        schema = _json_schema(content) if isinstance(content, dict) else None
        if schema is None:
            return None
        found.append(schema)
    if not found or any(schema != found[0] for schema in found):
        return None
    if found[0] in ({}, True):
        return None  # says nothing: no output schema rather than an empty one
    return found[0]


def _json_schema(content: dict[str, Any]) -> Any:
    for media, entry in content.items():
        kind = media.split(";")[0].strip().lower()
        if (kind == "application/json" or kind.endswith("+json")) and isinstance(entry, dict) \
                and "schema" in entry:
            return entry["schema"]
    return None
