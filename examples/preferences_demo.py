"""The README demo: serve `preferences.py` over HTTP and walk its flows with `rondo.Client`.

The client's `on_elicit` handler plays the user: it prints each question and picks an answer.
The client drives the retry loop (fresh id, answers under the same keys, state echoed byte for
byte) until each call completes.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rondo.client import Client, ElicitRequest

HERE = Path(__file__).resolve().parent
PICKS = {"color": "green", "size": "medium"}


def play_user(request: ElicitRequest) -> dict[str, Any]:
    print(f"    server asks: {request.message}")
    if request.mode == "url":
        print(f"    user opens {request.url} and agrees")
        return {"action": "accept"}
    field = next(iter(request.requested_schema["properties"]))
    print(f"    user picks {field} = {PICKS[field]!r}")
    return {"action": "accept", "content": {field: PICKS[field]}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def walk(url: str) -> None:
    async with Client(url, on_elicit=play_user, elicit_modes=("form", "url")) as client:
        print(f"connected: {client.server_info} over protocol {client.protocol_version}\n")
        print("tools:", ", ".join(tool.name for tool in await client.list_tools()))
        flows: list[tuple[str, Any]] = [
            ("tool favorite_color", lambda: client.call_tool("favorite_color", {"user": "ana"})),
            ("resource prefs://bo/color", lambda: client.read_resource("prefs://bo/color")),
            ("prompt color_poem", lambda: client.get_prompt("color_poem", {"user": "cy"})),
            ("tool profile (two rounds)", lambda: client.call_tool("profile", {"user": "ed"})),
            ("tool connect_calendar (URL consent, then a state-only round)",
             lambda: client.call_tool("connect_calendar", {"user": "flo"})),
        ]
        for label, call in flows:
            print(f"\n{label}")
            result = await call()
            print(f"  -> {result.text}")


def try_it_yourself() -> str:
    """The closing hint: the same flows, answered by you at the terminal with `rondo call`."""
    root = Path.cwd()
    here = HERE.relative_to(root) if HERE.is_relative_to(root) else HERE
    rondo = Path(sys.executable).with_name("rondo")
    shown = rondo.relative_to(root) if rondo.is_relative_to(root) else rondo
    python = Path(sys.executable)
    python_shown = python.relative_to(root) if python.is_relative_to(root) else python
    stdio = f"{python_shown} {here / 'preferences.py'} --stdio"
    return (
        "\nNow answer the questions yourself with `rondo call` (prompts on the terminal):\n"
        f"  {shown} call \"{stdio}\"   # lists what it offers\n"
        f"  {shown} call \"{stdio}\" profile '{{\"user\": \"you\"}}'\n"
        "or over HTTP, in two terminals:\n"
        f"  {shown} run {here / 'preferences.py'} --http 8000\n"
        f"  {shown} call http://127.0.0.1:8000/mcp favorite_color '{{\"user\": \"you\"}}'"
    )


def main() -> int:
    port = free_port()
    server = subprocess.Popen([sys.executable, str(HERE / "preferences.py"), "--http", str(port)])
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    print("the example server did not start", file=sys.stderr)
                    return 1
                time.sleep(0.05)
        print(f"rondo demo: examples/preferences.py at http://127.0.0.1:{port}/mcp (MRTR)\n")
        asyncio.run(walk(f"http://127.0.0.1:{port}/mcp"))
        print("\nEvery flow completed.")
        print(try_it_yourself())
        return 0
    finally:
        server.terminate()
        server.wait(10)
