# file: docs/snippets/legacy_config.py
import asyncio

import rondo
from rondo.legacy import LegacyConfig, close_stream

server = rondo.Server("reports")


@server.tool
async def build_report(ctx: rondo.Context) -> str:
    """A long job: free the connection, let the client poll for the result."""
    close_stream(ctx)  # 2025-11-25 SSE polling; a no-op on 2026-07-28, stdio and memory
    await asyncio.sleep(0.01)
    return "report ready"


config = LegacyConfig(
    idle_timeout=300,  # seconds without a request before a session expires
    max_sessions=2_000,  # beyond this, the least recently used idle session is evicted
    ask_timeout=120,  # seconds a ctx.ask waits for the client's answer
    retry_ms=2_000,  # the SSE retry hint sent with priming events
    log_level="warning",  # log at this level until the client calls logging/setLevel
)
app = server.asgi(legacy=config)  # or server.run_http(port=8000, legacy=config)
modern_only = server.asgi(legacy=False)  # 2026-07-28 only: no sessions at all

assert app.legacy.config.max_sessions == 2_000 and modern_only.legacy is None
print("legacy sessions up to", app.legacy.config.max_sessions)
