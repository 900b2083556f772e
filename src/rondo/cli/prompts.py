"""How `rondo call` answers what a server asks: field by field at the terminal (`Prompter`,
with Ctrl-C cancelling the call, `Interrupts`) or from a JSON file of answers (`FileAnswers`)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Mapping
from typing import Any, TextIO
from urllib.parse import urlsplit

from rondo.client.errors import ClientError
from rondo.client.handlers import ElicitRequest

Json = dict[str, Any]


class Declined(Exception):
    def __init__(self, action: str) -> None:
        self.action = action


class Interrupts:
    """Ctrl-C for `rondo call`: cancel the call, whether it waits on the network or on a prompt.

    asyncio.run's own handler only cancels the main task, which a prompt blocked reading the
    terminal would not notice until Enter. While a prompt reads, Ctrl-C interrupts the read;
    the question is answered `cancel` and the call itself is cancelled. A second Ctrl-C during
    the clean-up stops at once."""

    def __init__(self) -> None:
        self.task: asyncio.Task[Any] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.reading = False
        self.fired = False

    def handler(self, signum: int, frame: Any) -> None:
        if self.reading or self.fired or self.task is None or self.loop is None:
            self.fired = True
            raise KeyboardInterrupt
        self.fired = True
        self.loop.call_soon_threadsafe(self.task.cancel)

    def read_line(self, stdin: TextIO) -> str:
        self.reading = True
        try:
            return stdin.readline()
        except KeyboardInterrupt:
            self.out_of_prompt()
            raise Declined("cancel") from None
        finally:
            self.reading = False

    def out_of_prompt(self) -> None:
        if self.task is not None and self.loop is not None:
            self.loop.call_soon_threadsafe(self.task.cancel)


class Prompter:
    """Asks a person at a terminal (reads `stdin`, writes prompts to `out`)."""

    def __init__(self, stdin: TextIO | None = None, out: TextIO | None = None,
                 interrupts: Interrupts | None = None) -> None:
        self.stdin = stdin or sys.stdin
        self.out = out or sys.stderr
        self.interrupts = interrupts

    def ask(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        if self.interrupts is None:
            line = self.stdin.readline()
        else:
            line = self.interrupts.read_line(self.stdin)
        if not line:
            raise Declined("cancel")  # end of input: the person left
        value = line.rstrip("\n")
        if value.strip() in (":decline", ":cancel"):
            raise Declined(value.strip()[1:])
        return value

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def __call__(self, request: ElicitRequest) -> Json:
        try:
            if request.mode == "url":
                return self._url(request)
            return {"action": "accept", "content": self._form(request)}
        except Declined as exc:
            return {"action": exc.action}

    def _url(self, request: ElicitRequest) -> Json:
        url = request.url or ""
        host = urlsplit(url).hostname or "?"
        self.say(f"\nThe server asks you to open a link: {request.message}")
        self.say(f"  {url}")
        note = "  (the host is internationalised; check it carefully)" if "xn--" in host else ""
        self.say(f"  host: {host}{note}")
        while True:
            answer = self.ask("Open it? [y/N] ").strip().lower()
            if answer in ("y", "yes"):
                self.say("Open the link in your browser, finish there, then come back.")
                return {"action": "accept"}
            if answer in ("", "n", "no"):
                return {"action": "decline"}

    def _form(self, request: ElicitRequest) -> Json:
        schema = request.requested_schema or {}
        required = set(schema.get("required") or [])
        self.say(f"\nThe server asks: {request.message}  (:decline or :cancel to refuse)")
        content: Json = {}
        for name, prop in (schema.get("properties") or {}).items():
            value = self._field(name, prop, name in required)
            if value is not _SKIP:
                content[name] = value
        return content

    def _field(self, name: str, prop: Mapping[str, Any], required: bool) -> Any:
        label = prop.get("title") or name
        if prop.get("description"):
            self.say(f"  {label}: {prop['description']}")
        choices = _choices(prop)
        if choices:
            for index, (value, title) in enumerate(choices, 1):
                self.say(f"    {index}. {title}" + (f" ({value})" if title != value else ""))
        hint = _hint(prop, choices)
        default = prop.get("default")
        shown = f" [{_show(default)}]" if default is not None else ("" if required else " [skip]")
        while True:
            raw = self.ask(f"  {label} ({hint}){shown}: ").strip()
            if raw == "":
                if default is not None:
                    return default
                if not required:
                    return _SKIP
                self.say("    an answer is required")
                continue
            try:
                return parse_value(prop, raw, choices)
            except ValueError as exc:
                self.say(f"    {exc}")


_SKIP = object()


def _choices(prop: Mapping[str, Any]) -> list[tuple[str, str]]:
    items = prop.get("items") if prop.get("type") == "array" else None
    source = items if isinstance(items, Mapping) else prop
    if isinstance(source.get("enum"), list):
        names = source.get("enumNames") or source["enum"]
        return [(str(v), str(n)) for v, n in zip(source["enum"], names, strict=False)]
    options = source.get("oneOf") or source.get("anyOf")
    if isinstance(options, list):
        return [(str(o["const"]), str(o.get("title", o["const"]))) for o in options if isinstance(o, Mapping) and "const" in o]
    return []


def _hint(prop: Mapping[str, Any], choices: list[tuple[str, str]]) -> str:
    kind = prop.get("type", "string")
    if kind == "array":
        return "numbers or values, comma-separated"
    if choices:
        return "number or value"
    if kind == "boolean":
        return "y/n"
    bounds = [f"{k} {prop[k]}" for k in ("minimum", "maximum", "minLength", "maxLength") if k in prop]
    fmt = [prop["format"]] if "format" in prop else []
    return ", ".join([str(kind), *fmt, *bounds])


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "y" if value else "n"
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def parse_value(prop: Mapping[str, Any], raw: str, choices: list[tuple[str, str]] | None = None) -> Any:
    """One typed answer from what was typed; ValueError says what is wrong."""
    choices = _choices(prop) if choices is None else choices
    kind = prop.get("type", "string")
    if kind == "array":
        picked = [_pick(part.strip(), choices) for part in raw.split(",") if part.strip()]
        low, high = prop.get("minItems"), prop.get("maxItems")
        if low is not None and len(picked) < low:
            raise ValueError(f"pick at least {low}")
        if high is not None and len(picked) > high:
            raise ValueError(f"pick at most {high}")
        return picked
    if choices:
        return _pick(raw, choices)
    if kind == "boolean":
        lowered = raw.lower()
        if lowered in ("y", "yes", "true", "1"):
            return True
        if lowered in ("n", "no", "false", "0"):
            return False
        raise ValueError("answer y or n")
    if kind in ("integer", "number"):
        try:
            value: int | float = int(raw) if kind == "integer" else float(raw)
        except ValueError:
            raise ValueError(f"enter {'a whole number' if kind == 'integer' else 'a number'}") from None
        if "minimum" in prop and value < prop["minimum"]:
            raise ValueError(f"must be at least {prop['minimum']}")
        if "maximum" in prop and value > prop["maximum"]:
            raise ValueError(f"must be at most {prop['maximum']}")
        return value
    if "minLength" in prop and len(raw) < prop["minLength"]:
        raise ValueError(f"must be at least {prop['minLength']} characters")
    if "maxLength" in prop and len(raw) > prop["maxLength"]:
        raise ValueError(f"must be at most {prop['maxLength']} characters")
    fmt = prop.get("format")
    if fmt is not None:
        from rondo.kinds.formschema import is_date, is_date_time, is_email, is_uri

        checks: dict[str, Callable[[str], bool]] = {"email": is_email, "uri": is_uri, "date": is_date, "date-time": is_date_time}
        if fmt in checks and not checks[fmt](raw):
            raise ValueError(f"not a valid {fmt}")
    return raw


def _pick(raw: str, choices: list[tuple[str, str]]) -> str:
    if raw.isdigit() and 1 <= int(raw) <= len(choices):
        return choices[int(raw) - 1][0]
    for value, title in choices:
        if raw in (value, title):
            return value
    raise ValueError("choose one of: " + ", ".join(v for v, _ in choices))


class FileAnswers:
    """Answers from a JSON file, used in order (for scripts and tests)."""

    def __init__(self, answers: Any) -> None:
        self.queue = list(answers) if isinstance(answers, list) else [answers]

    def __call__(self, request: ElicitRequest) -> Json:
        if not self.queue:
            raise ClientError(f"the answers file has no answer left for: {request.message}")
        answer = self.queue.pop(0)
        if isinstance(answer, Mapping) and answer.get("action") in ("accept", "decline", "cancel"):
            result = dict(answer)
        elif request.mode == "url":
            return {"action": "accept" if answer else "decline"}
        else:
            result = {"action": "accept", "content": answer}
        if result["action"] == "accept" and request.mode != "url" and isinstance(result.get("content", {}), Mapping):
            result["content"] = with_defaults(request.requested_schema or {}, result.get("content") or {})
        return result


def with_defaults(schema: Mapping[str, Any], content: Mapping[str, Any]) -> Json:
    """`content` plus the schema's defaults for the fields it leaves out (what pressing Enter
    at the interactive prompt gives)."""
    filled = dict(content)
    for name, prop in (schema.get("properties") or {}).items():
        if name not in filled and isinstance(prop, Mapping) and prop.get("default") is not None:
            filled[name] = prop["default"]
    return filled
