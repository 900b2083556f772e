"""`rondo call`: a terminal client. List what a server offers, call a tool, read a resource, get
a prompt, and answer what it asks.

    rondo call http://127.0.0.1:8000/mcp                        # list everything it offers
    rondo call URL --list tools                                 # tools with their arguments
    rondo call "python examples/preferences.py --stdio" favorite_color '{"user": "ann"}'
    rondo call URL --read prefs://ann/color                     # read a resource
    rondo call URL --get color_poem '{"user": "ann"}'           # get a prompt
    rondo call URL TOOL '{"user": "ann"}' --answers answers.json  # scripted answers
    rondo call URL TOOL '{...}' --json                          # any command, as JSON

Progress notifications show as a bar on stderr (a count when there is no total); server log
messages at `--log-level` (default info; `off` to not ask for them) are printed to stderr.
Ctrl-C, at a prompt or while waiting, cancels the call: the exit code is 130, a stdio server is
closed (it runs in its own session, so the terminal's Ctrl-C does not reach it).

A protected HTTP server (401) makes it sign in: it prints the authorization URL (and opens a
browser when there is a display), catches the redirect on 127.0.0.1, and keeps the token in
`~/.local/state/rondo/tokens.json` (0600; `--token-store FILE`), so the next run goes straight
through.

Form elicitations are asked field by field (typed, validated, defaults offered; `:decline`
or `:cancel` at any prompt); URL elicitations show the full link and ask for consent. With
`--answers FILE` the answers come from a JSON file instead: a list used in order, each item an
ElicitResult (`{"action": "accept", "content": {...}}`) or just the content of an accepted
form. A tool answered with a task (the tasks extension) is followed to its end: its status
and status messages are shown as they change, and what it asks while it runs is asked here
too. Prompts go to stderr and results to stdout; the exit code is 1 for a tool error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from collections.abc import Callable, Mapping
from typing import Any, TextIO
from urllib.parse import urlsplit

from rondo.client.errors import ClientError
from rondo.client.handlers import ElicitRequest
from rondo.wire.errors import McpError

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


LISTS = ("tools", "resources", "templates", "prompts")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rondo call",
        description="A terminal MCP client: list what a server offers, call a tool, read a "
        "resource, get a prompt, answering the server's questions at the terminal.",
    )
    parser.add_argument("target", help="server URL (http://...) or the command that starts it (stdio)")
    parser.add_argument("tool", nargs="?", help="tool to call (omit to list everything)")
    parser.add_argument("arguments", nargs="?", default=None,
                        help="arguments as a JSON object (for the tool, or the prompt of --get)")
    parser.add_argument("--list", choices=LISTS, help="list only tools, resources, templates or prompts")
    parser.add_argument("--read", metavar="URI", help="read a resource (or a URI of a template)")
    parser.add_argument("--get", metavar="PROMPT", help="get a prompt (arguments as the JSON)")
    parser.add_argument("--answers", metavar="FILE", help="answer elicitations from this JSON file")
    parser.add_argument("--protocol", help="pin a protocol version (default: negotiate)")
    parser.add_argument("--header", action="append", default=[], metavar="NAME:VALUE",
                        help="extra HTTP header (repeatable)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per request (default 60)")
    parser.add_argument("--log-level", default="info", metavar="LEVEL",
                        help="server log messages to show (debug ... emergency, or off; default info)")
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON")
    sign_in = parser.add_argument_group("signing in to protected HTTP servers (OAuth)")
    sign_in.add_argument("--token-store", metavar="FILE",
                         help="where tokens are kept between runs (default ~/.local/state/rondo/tokens.json)")
    sign_in.add_argument("--client-id", help="a pre-registered client id (secret from $RONDO_CLIENT_SECRET)")
    sign_in.add_argument("--scope", action="append", default=[], help="scope to ask for as well (repeatable)")
    sign_in.add_argument("--no-browser", action="store_true", help="only print the sign-in URL")
    sign_in.add_argument("--no-auth", action="store_true", help="never sign in")
    return parser


def _auth(args: argparse.Namespace) -> Any:
    """`rondo call` signs in by printing the URL (and opening a browser when there is one),
    catching the redirect on 127.0.0.1, and keeping the token in a 0600 file for next time."""
    if args.no_auth or not str(args.target).startswith(("http://", "https://")):
        return None
    import os

    from rondo.client.auth import FileTokenStore, LoopbackRedirect, OAuth

    store = FileTokenStore(args.token_store) if args.token_store else FileTokenStore.default()
    return OAuth(redirect=LoopbackRedirect(open_browser=not args.no_browser), store=store,
                 client_id=args.client_id, client_secret=os.environ.get("RONDO_CLIENT_SECRET") if args.client_id else None,
                 client_name="rondo call", scopes=args.scope)


def main(argv: list[str]) -> int:
    """Entry point of `rondo call` (returns the exit code)."""
    args = _parser().parse_intermixed_args(argv)
    if args.get is not None or args.read is not None:
        if args.tool is not None and args.arguments is None and args.get is not None:
            args.tool, args.arguments = None, args.tool  # `--get NAME '{...}'`
        if args.tool is not None or (args.get is not None and args.read is not None):
            print("rondo call: give one of TOOL, --read URI or --get PROMPT", file=sys.stderr)
            return 2
    try:
        arguments = json.loads(args.arguments if args.arguments is not None else "{}")
    except json.JSONDecodeError as exc:
        print(f"rondo call: arguments are not JSON: {exc}", file=sys.stderr)
        return 2
    if not isinstance(arguments, dict):
        print("rondo call: arguments must be a JSON object", file=sys.stderr)
        return 2
    from rondo.wire.meta import LOG_LEVELS

    if args.log_level not in (*LOG_LEVELS, "off"):
        print(f"rondo call: --log-level must be one of {', '.join(LOG_LEVELS)} or off", file=sys.stderr)
        return 2
    headers = {}
    for item in args.header:
        name, sep, value = item.partition(":")
        if not sep:
            print(f"rondo call: --header wants NAME:VALUE, got {item!r}", file=sys.stderr)
            return 2
        headers[name.strip()] = value.strip()
    if args.answers:
        with open(args.answers, encoding="utf-8") as fh:
            handler: Callable[[ElicitRequest], Json] = FileAnswers(json.load(fh))
    interrupts = Interrupts()
    if not args.answers:
        handler = Prompter(interrupts=interrupts)
    # Our own SIGINT handler (asyncio.run leaves SIGINT alone when one is installed).
    previous = signal.signal(signal.SIGINT, interrupts.handler)
    try:
        return asyncio.run(_run(args, arguments, headers, handler, interrupts))
    except (ClientError, McpError, OSError) as exc:
        print(f"rondo call: {exc}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("\nrondo call: cancelled", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGINT, previous)


def task_status(out: TextIO) -> Callable[[Json], None]:
    """What `rondo call` shows of a task it follows: one line per status or message change."""

    def show(task: Json) -> None:
        message = task.get("statusMessage")
        out.write(f"[task {str(task.get('taskId'))[:8]}] {task.get('status')}"
                  + (f": {message}" if message else "") + "\n")
        out.flush()

    return show


def _target(target: str) -> Any:
    if target.startswith(("http://", "https://")):
        return target
    import shlex

    from rondo.client.transports.stdio import StdioTransport

    # Its own session: the terminal's Ctrl-C is ours to handle; we close the server cleanly.
    return StdioTransport(shlex.split(target), new_session=True)


async def _run(args: argparse.Namespace, arguments: Json, headers: Json,
               handler: Callable[[ElicitRequest], Json], interrupts: Interrupts | None = None) -> int:
    from rondo.client.session import Client
    from rondo.tasks.client import TasksClient

    if interrupts is not None:
        interrupts.task, interrupts.loop = asyncio.current_task(), asyncio.get_running_loop()
    show = Progress(sys.stderr)
    tasks = TasksClient(on_status=task_status(sys.stderr))
    level = None if args.log_level == "off" else args.log_level
    async with Client(_target(args.target), protocol=args.protocol, name="rondo-call",
                      on_elicit=handler, elicit_modes=("form", "url"), headers=headers or None,
                      timeout=args.timeout, auth=_auth(args), log_level=level,
                      on_notification=show.notification, tasks=tasks) as client:
        if args.read is not None:
            read = await client.read_resource(args.read, on_progress=show.progress)
            show.done()
            return _print_read(read, args.json)
        if args.get is not None:
            prompt = await client.get_prompt(args.get, {k: str(v) for k, v in arguments.items()},
                                             on_progress=show.progress)
            show.done()
            return _print_prompt(prompt, args.json)
        if args.tool is None:
            return await _print_lists(client, args.list, args.json)
        result = await client.call_tool(args.tool, arguments, on_progress=show.progress)
        show.done()
    if args.json:
        print(_json(result))
    else:
        for block in result.content:
            if block.get("type") == "text":
                print(block.get("text", ""))
            else:
                print(json.dumps(block))
        if result.structured_content is not None and not result.content:
            print(json.dumps(result.structured_content))
    return 1 if result.is_error else 0


def _json(value: Any) -> str:
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


async def _print_lists(client: Any, only: str | None, as_json: bool) -> int:
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
        print(_json(found))
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


def _print_read(result: Any, as_json: bool) -> int:
    if as_json:
        print(_json(result))
        return 0
    for item in result.contents:
        if "text" in item:
            print(item["text"])
        else:
            size = len(item.get("blob", "")) * 3 // 4
            print(f"[{item.get('mimeType', 'binary')}, about {size} bytes: use --json for the data]")
    return 0


def _print_prompt(result: Any, as_json: bool) -> int:
    if as_json:
        print(_json(result))
        return 0
    if result.description:
        print(f"# {result.description}")
    for message in result.messages:
        content = message.content
        text = content.get("text") if content.get("type") == "text" else json.dumps(content)
        print(f"{message.role}: {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
