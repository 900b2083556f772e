"""What `rondo call` prints: lists of what a server offers, results as text or JSON, progress
bars and log lines."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TextIO

Json = dict[str, Any]
LISTS = ("tools", "resources", "templates", "prompts")


def json_text(value: Any) -> str:
    return json.dumps(_plain(value), ensure_ascii=False)


def _plain(value: Any) -> Any:
    """JSON builtins of a result, as on the wire: a typed result's unset (None) fields left out."""
    import msgspec

    if isinstance(value, msgspec.Struct):
        out = {}
        for field in msgspec.structs.fields(value):
            item = getattr(value, field.name)
            if item is not None:
                out[field.encode_name] = _plain(item)
        return out
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


class Progress:
    """Progress as a bar on a terminal (a line per update elsewhere); log messages as lines."""

    WIDTH = 24

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.tty = bool(getattr(out, "isatty", lambda: False)())
        self.open = False

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        if total:
            filled = max(0, min(self.WIDTH, round(self.WIDTH * progress / total)))
            bar = "#" * filled + "-" * (self.WIDTH - filled)
            line = f"[{bar}] {progress:g}/{total:g}"
        else:
            line = f"progress {progress:g}"
        if message:
            line += f"  {message}"
        if self.tty:
            self.out.write("\r\x1b[2K" + line)
            self.open = True
        else:
            self.out.write(line + "\n")
        self.out.flush()

    def done(self) -> None:
        if self.open:
            self.out.write("\n")
            self.out.flush()
            self.open = False

    def notification(self, message: Json) -> None:
        if message.get("method") != "notifications/message":
            return
        params = message.get("params") or {}
        data = params.get("data")
        text = data if isinstance(data, str) else json.dumps(data)
        logger = f" {params['logger']}:" if isinstance(params.get("logger"), str) else ""
        self.done()
        self.out.write(f"[{params.get('level', 'info')}]{logger} {text}\n")
        self.out.flush()


def _signature(schema: Mapping[str, Any]) -> str:
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    parts = []
    for name, prop in props.items():
        kind = _type_text(prop) if isinstance(prop, Mapping) else "any"
        part = f"{name}{'' if name in required else '?'}: {kind}"
        if isinstance(prop, Mapping) and "default" in prop:
            part += f" = {json.dumps(prop['default'])}"
        parts.append(part)
    return "(" + ", ".join(parts) + ")"


def _type_text(prop: Mapping[str, Any]) -> str:
    if isinstance(prop.get("enum"), list):
        return " | ".join(json.dumps(v) for v in prop["enum"])
    kind = prop.get("type")
    if kind == "array" and isinstance(prop.get("items"), Mapping):
        return f"{_type_text(prop['items'])}[]"
    if isinstance(kind, list):
        return " | ".join(map(str, kind))
    if kind is None and isinstance(prop.get("anyOf"), list):
        return " | ".join(_type_text(p) for p in prop["anyOf"] if isinstance(p, Mapping))
    return str(kind or "any")


def _first_line(text: str | None) -> str:
    return text.strip().splitlines()[0] if text and text.strip() else ""


async def print_lists(client: Any, only: str | None, as_json: bool) -> int:
    caps = client.server_capabilities or {}
    wanted = [only] if only else [k for k in LISTS if (k if k != "templates" else "resources") in caps]
    found: dict[str, list[Any]] = {}
    for kind in wanted:
        if kind == "tools":
            found[kind] = await client.list_tools()
        elif kind == "resources":
            found[kind] = await client.list_resources()
        elif kind == "templates":
            found[kind] = await client.list_resource_templates()
        else:
            found[kind] = await client.list_prompts()
    if as_json:
        print(json_text(found))
        return 0
    for kind, items in found.items():
        print(f"{kind}:" if items else f"{kind}: none")
        for item in items:
            if kind == "tools":
                head = item.name + _signature(item.input_schema)
            elif kind == "resources":
                head = f"{item.uri}  ({item.name})"
            elif kind == "templates":
                head = f"{item.uri_template}  ({item.name})"
            else:
                head = item.name + "(" + ", ".join(
                    a.name + ("" if a.required else "?") for a in item.arguments) + ")"
            about = _first_line(item.description)
            print(f"  {head}" + (f"  {about}" if about else ""))
    return 0


def print_read(result: Any, as_json: bool) -> int:
    if as_json:
        print(json_text(result))
        return 0
    for item in result.contents:
        if "text" in item:
            print(item["text"])
        else:
            size = len(item.get("blob", "")) * 3 // 4
            print(f"[{item.get('mimeType', 'binary')}, about {size} bytes: use --json for the data]")
    return 0


def print_prompt(result: Any, as_json: bool) -> int:
    if as_json:
        print(json_text(result))
        return 0
    if result.description:
        print(f"# {result.description}")
    for message in result.messages:
        content = message.content
        text = content.get("text") if content.get("type") == "text" else json.dumps(content)
        print(f"{message.role}: {text}")
    return 0
