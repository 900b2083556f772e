"""tests/helpers/bridge_upstream.py's server over stdio, for the bridge's stdio process pool
(tests/gateway/test_bridge_stdio.py), plus `whoami`, which asks "Sure?" and answers with its
process id (so a test sees which process served a call)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import rondo  # noqa: E402
from tests.helpers.bridge_upstream import SURE, bridge_upstream  # noqa: E402

server = bridge_upstream()


@server.tool
def whoami(ctx: rondo.Context) -> str:
    """Asks first, then names the process that ran it."""
    print(f"whoami asked, key={os.environ.get('BRIDGE_KEY', '')}", file=sys.stderr, flush=True)
    sure = ctx.ask("sure", SURE).content["ok"]
    return f"pid {os.getpid()} sure={sure}"


if __name__ == "__main__":
    server.run()
