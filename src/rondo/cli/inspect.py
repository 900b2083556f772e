"""`rondo inspect APP.py[:SERVER] [--json]`: what a server offers and its capabilities.

The server file is imported and asked in this process through the in-memory link, as a
client would ask it (`server/discover` and every page of the four lists): no transport is
started, no port bound, no lifespan hook run. What is shown is what a client would see.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Mapping
from typing import Any

from ..wire.meta import CLIENT_CAPABILITIES, MODERN_VERSION, PROTOCOL_VERSION, SERVER_INFO

MAX_PAGES = 1000  # per list: a server that pages forever is cut off here
LISTS = (("tools/list", "tools"), ("resources/list", "resources"),
         ("resources/templates/list", "resourceTemplates"), ("prompts/list", "prompts"))


async def describe(server: Any) -> dict[str, Any]:
    """Discovery and the four lists, as the wire has them (all pages)."""
    from ..testing import connect

    conn = connect(server)
    ids = iter(range(1, 1_000_000))

    async def ask(method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        meta = {PROTOCOL_VERSION: MODERN_VERSION, CLIENT_CAPABILITIES: {}}
        message = {"jsonrpc": "2.0", "id": next(ids), "method": method,
                   "params": {**(params or {}), "_meta": meta}}
        answer = await conn.send(message)
        if answer is None or "error" in answer or not isinstance(answer.get("result"), dict):
            error = (answer or {}).get("error") or {}
            raise RuntimeError(f"{method}: {error.get('message', 'no answer')}")
        result: dict[str, Any] = answer["result"]
        return result

    try:
        found: dict[str, Any] = {"discover": await ask("server/discover")}
        capabilities = found["discover"].get("capabilities") or {}
        for method, field in LISTS:
            gate = "resources" if method.startswith("resources") else field
            items: list[Any] = []
            if gate in capabilities:
                cursor: Any = None
                for _ in range(MAX_PAGES):
                    page = await ask(method, {"cursor": cursor} if cursor else None)
                    items.extend(page.get(field) or [])
                    cursor = page.get("nextCursor")
                    if not cursor:
                        break
            found[field] = items
        return found
    finally:
        await conn.close()


# -- text ------------------------------------------------------------------------------------

def _type_of(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    if "enum" in schema and isinstance(schema["enum"], list):
        return " | ".join(json.dumps(v) for v in schema["enum"][:6]) + (" | ..." if len(schema["enum"]) > 6 else "")
    if "const" in schema:
        return json.dumps(schema["const"])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return " | ".join(_type_of(s) for s in schema[key])
    kind = schema.get("type")
    if kind == "array":
        return f"list[{_type_of(schema.get('items'))}]"
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    return str(kind) if kind else "any"


def _bounds(schema: Mapping[str, Any]) -> str:
    parts = []
    for key, sign in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="),
                      ("exclusiveMaximum", "<"), ("minLength", "len>="), ("maxLength", "len<=")):
        if key in schema:
            parts.append(f"{sign}{schema[key]}")
    return f" ({', '.join(parts)})" if parts else ""


def _arguments(schema: Any) -> list[str]:
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return []
    required = set(schema.get("required") or [])
    lines = []
    for name, prop in schema["properties"].items():
        prop = prop if isinstance(prop, dict) else {}
        mark = "" if name in required else "?"
        default = f" = {json.dumps(prop['default'])}" if "default" in prop else ""
        text = f"{name}{mark}: {_type_of(prop)}{_bounds(prop)}{default}"
        if prop.get("description"):
            text += f"  - {prop['description']}"
        lines.append(text)
    return lines


def _first_line(text: Any) -> str:
    return str(text).strip().splitlines()[0] if isinstance(text, str) and text.strip() else ""


def render(found: Mapping[str, Any], server: Any = None) -> str:
    """The human-readable report (`server`, when given, adds what the wire does not carry:
    which tools may answer with a task)."""
    discover = found["discover"]
    meta = discover.get("_meta") if isinstance(discover.get("_meta"), dict) else {}
    info = discover.get("serverInfo") or meta.get(SERVER_INFO) or {}
    caps = discover.get("capabilities") or {}
    out = [f"{info.get('name', '?')} {info.get('version', '')}".rstrip()]
    versions = discover.get("supportedVersions")
    if versions:
        out.append(f"  protocol versions: {', '.join(versions)}")
    shown: list[str] = []
    for name, value in caps.items():
        if name == "extensions" and isinstance(value, dict):
            shown.extend(f"extension {ext}" for ext in value)
        elif isinstance(value, dict) and value:
            shown.append(f"{name} ({', '.join(k for k, v in value.items() if v)})")
        else:
            shown.append(name)
    out.append(f"  capabilities: {', '.join(shown) if shown else 'none'}")
    if discover.get("instructions"):
        out.append(f"  instructions: {_first_line(discover['instructions'])}")
    tools = found.get("tools") or []
    out.append(f"\ntools ({len(tools)})")
    for tool in tools:
        output = " -> structured" if tool.get("outputSchema") else ""
        task = (tool.get("execution") or {}).get("taskSupport")
        local = getattr(server, "tools", {}).get(tool.get("name")) if server is not None else None
        task = task or getattr(local, "task", None)
        extra = f"  [task: {task}]" if task and task != "forbidden" else ""
        out.append(f"  {tool.get('name')}{output}{extra}")
        if tool.get("description"):
            out.append(f"      {_first_line(tool['description'])}")
        out.extend(f"      {line}" for line in _arguments(tool.get("inputSchema")))
    for title, field, key in (("resources", "resources", "uri"),
                              ("resource templates", "resourceTemplates", "uriTemplate")):
        items = found.get(field) or []
        out.append(f"\n{title} ({len(items)})")
        for item in items:
            mime = f"  ({item['mimeType']})" if item.get("mimeType") else ""
            out.append(f"  {item.get(key)}  {item.get('name', '')}{mime}".rstrip())
            if item.get("description"):
                out.append(f"      {_first_line(item['description'])}")
    prompts = found.get("prompts") or []
    out.append(f"\nprompts ({len(prompts)})")
    for prompt in prompts:
        args = ", ".join(a.get("name", "?") + ("" if a.get("required") else "?")
                         for a in prompt.get("arguments") or [])
        out.append(f"  {prompt.get('name')}({args})")
        if prompt.get("description"):
            out.append(f"      {_first_line(prompt['description'])}")
    return "\n".join(out)


# -- the command ------------------------------------------------------------------------------

def inspect_command(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="rondo inspect",
        description="Show what a server file offers (tools with their arguments, resources, "
                    "templates, prompts) and its capabilities, without starting a transport.")
    parser.add_argument("app", metavar="APP.py[:SERVER]", help="the server file (and its name)")
    parser.add_argument("--json", action="store_true",
                        help="print discovery and the four lists as the wire has them")
    args = parser.parse_args(argv)
    from ..fleet.loader import load_server

    try:
        server = load_server(args.app)
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return 2
    try:
        found = asyncio.run(describe(server))
    except RuntimeError as exc:
        print(f"rondo inspect: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(found, indent=2, ensure_ascii=False) if args.json else render(found, server))
    return 0
