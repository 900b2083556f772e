"""rondo's client drives a small tasks server written with @modelcontextprotocol/ext-tasks 0.2.2
(interop/ts_tasks_server.mjs, whose V2 guards check each tasks request rondo sends).

    .venv/bin/python interop/rondo_tasks_check.py [--node PATH]

Checks: `call_tool` follows a task through `input_required` (the question answered by the same
`on_elicit` handler, through `tasks/update`) to its inlined result; a caller that gives up
cancels the task with `tasks/cancel`; a client without `tasks=True` is refused -32021.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from rondo.client import Client, ElicitRequest, McpError  # noqa: E402
from rondo.tasks import TasksClient  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def check(url: str) -> None:
    asked: list[str] = []
    seen: list[dict[str, Any]] = []

    def confirm(request: ElicitRequest) -> dict[str, Any]:
        asked.append(request.message)
        return {"action": "accept", "content": {"confirm": True}}

    tasks = TasksClient(on_status=lambda task: seen.append(task))
    async with Client(url, on_elicit=confirm, tasks=tasks) as client:
        result = await client.call_tool("archive", {"folder": "photos"})
        assert result.text == "archived photos", result
        assert asked == ["Archive photos?"], asked  # once, though polls showed it again
        statuses = [t["status"] for t in seen]
        assert statuses[0] == "working" and "input_required" in statuses and statuses[-1] == "completed", statuses
        print("ok task followed through input_required (tasks/update) to its result")

        seen.clear()
        try:
            await asyncio.wait_for(client.call_tool("hang"), 0.5)
            raise AssertionError("hang returned")
        except TimeoutError:
            pass
        task_id = seen[0]["taskId"]
        assert (await client.task(task_id).get())["status"] == "cancelled"
        print("ok a caller giving up cancels the task (tasks/cancel)")

    async with Client(url) as plain:
        try:
            await plain.call_tool("archive", {"folder": "x"})
            raise AssertionError("no -32021")
        except McpError as exc:
            assert exc.code == -32021, exc
        print("ok without tasks=True the server refuses -32021")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--node", default=shutil.which("node") or "node")
    args = parser.parse_args()
    port = free_port()
    proc = subprocess.Popen([args.node, str(ROOT / "interop" / "ts_tasks_server.mjs"), str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"tasks server did not start: {proc.stderr.read() if proc.stderr else ''}")
            time.sleep(0.05)
        asyncio.run(check(f"http://127.0.0.1:{port}/mcp"))
    finally:
        proc.terminate()
        proc.wait(10)
        errors = proc.stderr.read() if proc.stderr else ""
    if "GUARD" in errors:
        print(errors)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
