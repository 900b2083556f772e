"""`print()` in a stdio server's handler goes to stderr and leaves the protocol stream whole."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from rondo.client import Client

pytestmark = pytest.mark.slow

APP = '''
import subprocess, sys
import rondo

server = rondo.Server("chatty", state=None)


@server.tool
def noisy(n: int) -> str:
    """Prints n lines, then answers."""
    for i in range(n):
        print(f"debug line {i}")
    subprocess.run(["echo", "from a child process"], check=True)  # writes to file descriptor 1
    return "done"


@server.tool
async def noisy_async(n: int) -> str:
    """The same from an async handler (served on the event loop side)."""
    for i in range(n):
        print(f"async line {i}", flush=(i % 2 == 0))
    return "async done"


if __name__ == "__main__":
    server.run_stdio()
'''


def test_prints_go_to_stderr_and_the_stream_stays_valid(tmp_path: Path) -> None:
    app = tmp_path / "chatty.py"
    app.write_text(APP)
    err_path = tmp_path / "stderr.txt"

    async def go() -> tuple[str, str]:
        with err_path.open("wb") as err:
            async with Client([sys.executable, str(app)], stderr=err) as client:
                first = await client.call_tool("noisy", {"n": 2000})
                second = await client.call_tool("noisy_async", {"n": 2000})
                return first.text, second.text

    assert asyncio.run(go()) == ("done", "async done")
    logged = err_path.read_text()
    assert "debug line 1999" in logged and "async line 1999" in logged
    assert "from a child process" in logged
