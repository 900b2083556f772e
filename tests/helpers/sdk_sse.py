"""An old-style (2024-11-05 HTTP+SSE) MCP server nobody here wrote: a script run on the official
Python SDK (`mcp` 2.3.0, its own pinned venv that scripts/setup.sh installs), started on a free
loopback port and stopped after. The script prints `ready`, then serves; its further stdout
lines (a run log, say) go to `lines` as they come."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers.loopback import free_port
from tests.helpers.processes import end

ROOT = Path(__file__).resolve().parents[2]
SDK_PYTHON = ROOT / ".cache" / "interop-mcp-venv" / "bin" / "python"


@dataclass
class SdkServer:
    url: str  # its SSE endpoint
    lines: list[str] = field(default_factory=list)  # what it printed after `ready`


@contextmanager
def sdk_sse_server(script: Path, *, seconds: float = 20) -> Iterator[SdkServer]:
    if not SDK_PYTHON.exists():
        raise AssertionError(f"{SDK_PYTHON} is missing: `bash scripts/setup.sh` installs the "
                             "pinned official Python SDK (mcp==2.3.0) there")
    port = free_port()
    proc = subprocess.Popen([str(SDK_PYTHON), str(script), str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    made = SdkServer(f"http://127.0.0.1:{port}/sse")
    try:
        out = proc.stdout
        assert out is not None and out.readline().strip() == b"ready"

        def read() -> None:  # the whole life: a chatty server never fills the pipe
            for line in out:
                made.lines.append(line.decode().strip())

        threading.Thread(target=read, daemon=True).start()
        deadline = time.monotonic() + seconds
        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline, "the SDK's SSE server did not listen"
            time.sleep(0.05)
        yield made
    finally:
        end(proc, 10)
