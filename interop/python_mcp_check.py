"""The official Python `mcp` client (mcp==2.3.0, its own venv) drives examples/preferences.py.

    .cache/interop-mcp-venv/bin/python interop/python_mcp_check.py [--era modern|legacy] [--stdio | --http]

Pinned to 2026-07-28 (default) or in legacy mode (the initialize handshake), over stdio and
over HTTP, through the flows: tool, resource, prompt, two rounds (profile), URL elicitation
followed by a state-only round, a declined answer, and (modern only) a manual retry with
changed arguments but the old state (rejected with -32602).
The rondo server seals its requestState, so a completed multi-round call also shows that the
client echoed the state byte for byte. Run it with the venv that has `mcp` installed; the
server runs under the repository's .venv (RONDO_PY overrides). Exits 0 when all checks pass.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import anyio
from harness import free_port
from mcp import Client, StdioServerParameters
from mcp.client.context import ClientRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitResult

ROOT = Path(__file__).resolve().parent.parent
PYTHON = os.environ.get("RONDO_PY", str(ROOT / ".venv" / "bin" / "python"))
EXAMPLE = str(ROOT / "examples" / "preferences.py")
MODERN = "2026-07-28"
LEGACY = "2025-11-25"


class Answers:
    """The elicitation callback: what the 'user' says, switchable between calls."""

    def __init__(self) -> None:
        self.color: dict[str, Any] = {"action": "accept", "content": {"color": "red"}}
        self.asked: list[Any] = []

    async def __call__(self, context: ClientRequestContext, params: Any) -> ElicitResult:
        self.asked.append(params)
        if params.mode == "url":
            return ElicitResult(action="accept")
        if "size" in params.requested_schema.get("properties", {}):
            return ElicitResult(action="accept", content={"size": "large"})
        return ElicitResult(**self.color)


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def flows(server: Any, mode: str) -> list[str]:
    answers = Answers()
    done: list[str] = []
    async with Client(server, mode=mode, elicitation_callback=answers, read_timeout_seconds=30) as client:
        if mode == MODERN:
            assert client.protocol_version == MODERN, client.protocol_version
        else:
            # Legacy mode: the initialize handshake; ctx.ask and explicit InputRequired rounds
            # reach the client as server-to-client requests on the session.
            assert client.protocol_version == LEGACY, client.protocol_version

        result = await client.call_tool("favorite_color", {"user": "ann"})
        assert text_of(result) == "ann likes red.", text_of(result)
        assert answers.asked[-1].message == "Which color do you like, ann?"
        done.append("tool favorite_color")

        read = await client.read_resource("prefs://bea/color")
        assert read.contents[0].text == "bea likes red.", read
        done.append("resource prefs://{user}/color")

        prompt = await client.get_prompt("color_poem", {"user": "cy"})
        assert prompt.messages[0].content.text == "Write a short poem for cy about the color red.", prompt
        done.append("prompt color_poem")

        result = await client.call_tool("profile", {"user": "dee"})
        assert text_of(result) == "dee: color red, size large.", text_of(result)
        done.append("multi-round profile (sealed state echoed twice)")

        result = await client.call_tool("connect_calendar", {"user": "eve"})
        assert text_of(result) == "Calendar connected for eve.", text_of(result)
        assert answers.asked[-1].url == "https://calendar.example.com/connect?user=eve"
        done.append("URL elicitation then a state-only round")

        answers.color = {"action": "decline"}
        result = await client.call_tool("favorite_color", {"user": "fay"})
        assert text_of(result) == "fay did not pick a color.", text_of(result)
        done.append("declined answer")
        if mode != MODERN:
            return done

        interim = await client.session.call_tool("profile", {"user": "gus"}, allow_input_required=True)
        assert interim.result_type == "input_required" and interim.request_state, interim
        try:
            await client.session.call_tool(
                "profile",
                {"user": "someone-else"},
                input_responses={"color": {"action": "accept", "content": {"color": "blue"}}},
                request_state=interim.request_state,
                allow_input_required=True,
            )
        except MCPError as exc:
            assert exc.error.code == -32602, exc.error
        else:
            raise AssertionError("changed arguments with the old state must be rejected")
        done.append("changed arguments with the old state rejected (-32602)")
    return done


def start_http() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen([PYTHON, EXAMPLE, "--http", str(port)], stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=1)
            break
        except urllib.error.HTTPError:
            break  # it answers (405 for GET): up
        except OSError:
            time.sleep(0.1)
    else:
        proc.kill()
        raise SystemExit("rondo server did not start")
    return proc, url


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stdio", action="store_true")
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--era", choices=("modern", "legacy"), default="modern")
    args = parser.parse_args(argv)
    mode = MODERN if args.era == "modern" else "legacy"
    both = not (args.stdio or args.http)
    lines: list[str] = []
    if args.stdio or both:
        params = StdioServerParameters(command=PYTHON, args=[EXAMPLE, "--stdio"], env=dict(os.environ))
        lines += [f"{args.era} stdio: {line}" for line in await flows(params, mode)]
    if args.http or both:
        proc, url = start_http()
        try:
            lines += [f"{args.era} http: {line}" for line in await flows(url, mode)]
        finally:
            proc.terminate()
            proc.wait(10)
    for line in lines:
        print(f"ok   Python mcp client -> preferences.py {line}")
    print(f"Python mcp client -> preferences.py: {len(lines)} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1:]))
