"""rondo's MCP Apps client half reads views from a server written with the official packages
(interop/ts_apps_server.mjs: @modelcontextprotocol/server 2.4.0 with ext-apps 2.0.4's
registerAppTool / registerAppResource), over stdio on 2026-07-28 and on 2025-11-25: the tool's
link (nested and flat keys as the helper writes them), the app-only visibility, the view's HTML
and its `_meta.ui` parsed into typed values, the CSP a host would build, and the tool's text.

    .venv/bin/python interop/rondo_apps_check.py [--node PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from rondo.apps.client import AppsClient, tool_view  # noqa: E402
from rondo.client import Client  # noqa: E402

SERVER = str(ROOT / "interop" / "ts_apps_server.mjs")
VIEW = "ui://weather/view.html"


async def check(node: str, protocol: str) -> None:
    async with Client([node, SERVER], protocol=protocol, extensions=[AppsClient()]) as host:
        tools = {t.name: t for t in await host.list_tools()}
        assert tools["weather"].meta is not None
        assert tools["weather"].meta.get("ui/resourceUri") == VIEW, tools["weather"].meta
        print(f"ok {protocol}: registerAppTool's tool carries both link keys")
        linked = await tool_view(host, "weather")
        assert linked is not None and linked.link.resource_uri == VIEW
        assert linked.html.startswith("<!doctype html>")
        meta = linked.meta
        assert meta.csp is not None and meta.csp.connect_domains == ("https://api.weather.example",)
        assert meta.csp.resource_domains == ("https://*.cdn.example",)
        assert meta.permissions is not None and meta.permissions.geolocation
        assert meta.prefers_border is False
        assert "connect-src 'self' https://api.weather.example;" in meta.policy()
        print(f"ok {protocol}: the view reads typed (CSP, permissions, border) with its policy")
        refresh = await tool_view(host, "refresh")
        assert refresh is not None and refresh.link.visibility == ("app",)
        print(f"ok {protocol}: the app-only tool's visibility parses")
        assert (await host.call_tool("weather")).text == "sunny"
        assert (await host.call_tool("refresh")).text == "refreshed"
        print(f"ok {protocol}: both tools answer text")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--node", default=shutil.which("node") or "node")
    node = parser.parse_args().node
    for protocol in ("2026-07-28", "2025-11-25"):
        asyncio.run(asyncio.wait_for(check(node, protocol), 60))
    return 0


if __name__ == "__main__":
    sys.exit(main())
