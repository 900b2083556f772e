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
from collections.abc import Callable
from typing import Any, TextIO

from rondo.client.errors import ClientError
from rondo.client.handlers import ElicitRequest
from rondo.wire.errors import McpError

from .prompts import FileAnswers, Interrupts, Prompter
from .show import LISTS, Progress, json_text, print_lists, print_prompt, print_read

Json = dict[str, Any]




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
            return print_read(read, args.json)
        if args.get is not None:
            prompt = await client.get_prompt(args.get, {k: str(v) for k, v in arguments.items()},
                                             on_progress=show.progress)
            show.done()
            return print_prompt(prompt, args.json)
        if args.tool is None:
            return await print_lists(client, args.list, args.json)
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
