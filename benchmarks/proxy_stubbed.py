"""`rondo proxy`'s downstream side alone, served: `proxy(url)` under `serve()` as `rondo proxy`
serves it, with its upstream link's `resume` answered from memory (`proxy_inprocess.stub`, what
benchmarks/server.py would answer), so no request reaches the upstream after start-up.

    python benchmarks/proxy_stubbed.py UPSTREAM_PORT PORT

The upstream must run for start-up (the proxy lists its tools there). relay_cpu.py serves it
beside the real proxy: the difference is what the upstream exchange costs the proxy.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from proxy_inprocess import stub  # noqa: E402

from rondo.gateway import proxy  # noqa: E402
from rondo.transport.serve import serve  # noqa: E402


def main(argv: list[str]) -> None:
    server = proxy(f"http://127.0.0.1:{argv[0]}/mcp")

    @server.lifespan
    async def stubbed(_: Any) -> AsyncIterator[None]:  # runs after the link has connected
        link = next(ext.link for ext in server.extensions.values() if hasattr(ext, "link"))
        stub(link.client)
        yield

    serve(server, port=int(argv[1]))


if __name__ == "__main__":
    main(sys.argv[1:])
