"""What the interop check scripts share: a free loopback port, waiting for a fixture server to
answer HTTP, and running the Inspector's CLI for one JSON answer."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
INSPECTOR_CLI = ROOT / "interop/node_modules/@modelcontextprotocol/inspector/clients/cli/build/index.js"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait(url: str, proc: subprocess.Popen[bytes]) -> None:
    """Until `url` answers HTTP at all (any status), for 20 s; exit if the server exits."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit("the fixture server exited")
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.1)
    sys.exit("the fixture server did not start")


def inspector(node: str, url: str, *args: str) -> Any:
    """The Inspector CLI's JSON answer to one `--method ...` call against `url`."""
    # The real path: the CLI runs only when argv[1] is its own file (not a symlinked node_modules).
    done = subprocess.run([node, str(INSPECTOR_CLI.resolve()), url, *args], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)
