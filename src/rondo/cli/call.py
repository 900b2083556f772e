"""`rondo call`: a terminal client. List what a server offers, call a tool, read a resource, get
a prompt, and answer what it asks.

    rondo call http://127.0.0.1:8000/mcp                        # list everything it offers
    rondo call URL --list tools                                 # tools with their arguments
    rondo call "python examples/preferences.py --stdio" favorite_color '{"user": "ann"}'
    rondo call URL --read prefs://ann/color                     # read a resource
    rondo call URL --get color_poem '{"user": "ann"}'           # get a prompt
    rondo call URL TOOL '{"user": "ann"}' --answers answers.json  # scripted answers
    rondo call URL TOOL '{...}' --json                          # any command, as JSON
    rondo call app.py pack items=3 speed=fast                   # a server file; NAME=VALUE args

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
from collections.abc import Callable
from typing import Any, TextIO

from rondo.client.errors import ClientError
from rondo.client.handlers import ElicitRequest
from rondo.wire.errors import McpError
from rondo.wire.meta import LEGACY_VERSIONS, MODERN_VERSIONS

from .prompts import FileAnswers, Interrupts, Prompter
from .show import LISTS, Progress, json_text, print_lists, print_prompt, print_read

Json = dict[str, Any]
PROTOCOLS = (*MODERN_VERSIONS, *LEGACY_VERSIONS)




def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rondo call",
        description="A terminal MCP client: list what a server offers, call a tool, read a "
        "resource, get a prompt, answering the server's questions at the terminal.",
    )
    parser.add_argument("target", help="server URL (http://...), a server file (app.py[:SERVER], "
                        "run with rondo run) or the command that starts one (stdio)")
    parser.add_argument("tool", nargs="?", help="tool to call (omit to list everything)")
    parser.add_argument("arguments", nargs="*", default=[],
                        help="arguments: one JSON object, or NAME=VALUE pairs (VALUE read as the "
                        "tool's schema says: text for a string, JSON for numbers, booleans, "
                        "lists and objects)")
    parser.add_argument("--list", choices=LISTS, help="list only tools, resources, templates or prompts")
    parser.add_argument("--read", metavar="URI", help="read a resource (or a URI of a template)")
    parser.add_argument("--get", metavar="PROMPT", help="get a prompt (arguments as the JSON)")
    parser.add_argument("--answers", metavar="FILE", help="answer elicitations from this JSON file")
    parser.add_argument("--protocol", choices=PROTOCOLS, metavar="VERSION",
                        help="pin a protocol version, one of " + ", ".join(PROTOCOLS)
                        + " (default: negotiate)")
    parser.add_argument("--header", action="append", default=[], metavar="NAME:VALUE",
                        help="extra HTTP header (repeatable)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per request, counted again from each progress notification (default 60)")
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
        if args.tool is not None and args.get is not None:
            args.tool, args.arguments = None, [args.tool, *args.arguments]  # `--get NAME '{...}'`
        if args.tool is not None or (args.get is not None and args.read is not None):
            print("rondo call: give one of TOOL, --read URI or --get PROMPT", file=sys.stderr)
            return 2
    try:
        arguments, pairs = parse_arguments(args.arguments)
    except ValueError as exc:
        print(f"rondo call: {exc}", file=sys.stderr)
        return 2
    args.pairs = pairs
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
        print(f"rondo call: {cli_message(exc)}", file=sys.stderr)
        return 1
    except ValueError as exc:  # an argument the tool's schema refuses
        print(f"rondo call: {exc}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("\nrondo call: cancelled", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGINT, previous)


def task_status(out: TextIO) -> Callable[[Json], None]:
    """What `rondo call` shows of a task it follows: one line per status or message change."""

    def show(task: Json) -> None:
        message = task.get("statusMessage")
        # The whole id: `client.task(ID)` resumes it by hand.
        out.write(f"[task {task.get('taskId')}] {task.get('status')}"
                  + (f": {message}" if message else "") + "\n")
        out.flush()

    return show


def _target(target: str) -> Any:
    if target.startswith(("http://", "https://")):
        return target

    from rondo.client.transports.stdio import StdioTransport

    # Its own session: the terminal's Ctrl-C is ours to handle; we close the server cleanly.
    return StdioTransport(command_of(target), new_session=True)


def command_of(target: str) -> list[str]:
    """The command that starts `target`: a server file (`app.py`, `app.py:SERVER`) runs with
    `rondo run` under this Python; anything else is a command line."""
    import os
    import shlex

    path = target.rpartition(":")[0] if target.count(":") and not os.path.isfile(target) else target
    if path.endswith(".py") and os.path.isfile(path) and " " not in target.strip():
        return [sys.executable, "-m", "rondo", "run", target]
    return shlex.split(target)


def parse_arguments(given: list[str]) -> tuple[Json, dict[str, str]]:
    """(arguments from a JSON object, NAME=VALUE pairs still to read by the tool's schema)."""
    if not given:
        return {}, {}
    if len(given) == 1 and given[0].lstrip().startswith("{"):
        try:
            arguments = json.loads(given[0])
        except json.JSONDecodeError as exc:
            raise ValueError(f"arguments are not JSON: {exc}") from None
        return arguments, {}  # an object: it starts with "{"
    pairs: dict[str, str] = {}
    for item in given:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"arguments are one JSON object or NAME=VALUE pairs; got {item!r}")
        pairs[name] = value
    return {}, pairs


def typed_arguments(pairs: dict[str, str], schema: Any) -> Json:
    """NAME=VALUE pairs read by the input schema: a string property takes the text as it is;
    any other type is read as JSON (`3`, `true`, `["a"]`); a property the schema does not
    name is JSON when it parses, else text."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    props = props if isinstance(props, dict) else {}
    out: Json = {}
    for name, text in pairs.items():
        found = props.get(name)
        prop: dict[str, Any] = found if isinstance(found, dict) else {}
        types = prop.get("type")
        kinds = set(types) if isinstance(types, list) else {types} if types else set()
        if "string" in kinds or (not kinds and "enum" in prop and all(isinstance(v, str) for v in prop["enum"])):
            out[name] = text
            continue
        try:
            out[name] = json.loads(text)
        except json.JSONDecodeError:
            if kinds and "string" not in kinds:
                raise ValueError(f"{name}={text!r}: the tool wants {'/'.join(sorted(map(str, kinds)))} "
                                 "(JSON, e.g. 3, true or [\"a\"])") from None
            out[name] = text
    return out


def cli_message(exc: BaseException) -> str:
    """An error as `rondo call` says it: the library's `client_id=` is the `--client-id` flag."""
    text = str(exc)
    if "client_id=" in text:
        text = text.replace("pass client_id= for a pre-registered client",
                            "pass --client-id ID for a pre-registered client (its secret in "
                            "$RONDO_CLIENT_SECRET)").replace("client_id=", "--client-id")
    return text


async def _run(args: argparse.Namespace, arguments: Json, headers: Json,
               handler: Callable[[ElicitRequest], Json], interrupts: Interrupts | None = None) -> int:
    from rondo.client.halves import client_half
    from rondo.client.session import Client

    if interrupts is not None:
        interrupts.task, interrupts.loop = asyncio.current_task(), asyncio.get_running_loop()
    show = Progress(sys.stderr)
    tasks = client_half("tasks").TasksClient(on_status=task_status(sys.stderr))
    level = None if args.log_level == "off" else args.log_level
    async with Client(_target(args.target), protocol=args.protocol, name="rondo-call",
                      on_elicit=handler, elicit_modes=("form", "url"), headers=headers or None,
                      timeout=args.timeout, auth=_auth(args), log_level=level,
                      on_notification=show.notification, tasks=tasks) as client:
        if args.read is not None:
            read = await client.read_resource(args.read, on_progress=show.progress)
            show.done()
            return print_read(read, args.json)
        if args.get is not None:
            given = {**arguments, **(getattr(args, "pairs", None) or {})}
            prompt = await client.get_prompt(args.get, {k: str(v) for k, v in given.items()},
                                             on_progress=show.progress)
            show.done()
            return print_prompt(prompt, args.json)
        if args.tool is None:
            return await print_lists(client, args.list, args.json)
        pairs = getattr(args, "pairs", None)
        if pairs:
            tools = {tool.name: tool for tool in await client.list_tools()}
            known = tools.get(args.tool)
            arguments = typed_arguments(pairs, known.input_schema if known is not None else None)
        result = await client.call_tool(args.tool, arguments, on_progress=show.progress)
        show.done()
    if args.json:
        print(json_text(result))
    else:
        for block in result.content:
            if block.get("type") == "text":
                print(block.get("text", ""))
            else:
                print(json.dumps(block))
        if result.structured_content is not None and not result.content:
            print(json.dumps(result.structured_content))
    return 1 if result.is_error else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
