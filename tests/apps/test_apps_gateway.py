"""MCP Apps behind rondo's gateway: a view-backed server mounted under a namespace, and served
through `rondo.proxy` from a stdio upstream. URIs are identities the gateway keeps, so the
tools' `ui://` links still name the view the parent serves; a view's call that asks the user
is relayed like any input round, on both eras."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

import rondo
from rondo.apps import Apps, AppsError
from rondo.apps.client import AppsClient, tool_view
from rondo.gateway import mount

UPSTREAM = Path(__file__).resolve().parents[1] / "helpers" / "apps_server.py"
PAGE = "<!doctype html><html><body>v</body></html>"


def test_a_mounted_apps_server_keeps_its_links_and_views() -> None:
    child = rondo.Server("shop")
    apps = child.extension(Apps())
    view = apps.view("ui://shop/table", html=PAGE, prefers_border=True)
    apps.tool(lambda: "two orders", view=view, name="orders", description="List orders.")
    apps.tool(lambda: "refreshed", view=view, name="refresh", description="Refresh.",
              visibility=["app"])
    parent = rondo.Server("gateway")
    parent_apps = parent.extension(Apps())  # the parent advertises the extension itself
    mount(parent, child, namespace="shop")
    parent_apps.check()  # the mounted links name views the parent now serves

    async def go() -> Any:
        async with rondo.Client(parent, extensions=[AppsClient()]) as host:
            linked = await tool_view(host, "shop_orders")
            app_only = await tool_view(host, "shop_refresh")
            return linked, app_only, (await host.call_tool("shop_refresh")).text

    linked, app_only, called = asyncio.run(go())
    assert linked.link.resource_uri == "ui://shop/table" and linked.html == PAGE
    assert linked.meta.prefers_border is True
    assert app_only.link.visibility == ("app",) and called == "refreshed"


def test_a_parent_without_the_view_fails_its_check() -> None:
    parent = rondo.Server("gateway")
    parent_apps = parent.extension(Apps())
    parent.tool(lambda: "x", name="orphan", description="d",
                meta={"ui": {"resourceUri": "ui://elsewhere/view"}})
    with pytest.raises(AppsError, match="renders in ui://elsewhere/view, which the server does"):
        parent_apps.check()


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
def test_through_rondo_proxy_the_view_reads_and_its_asking_call_relays(protocol: str) -> None:
    proxy = rondo.proxy([sys.executable, str(UPSTREAM)], state=rondo.StatePolicy(secret=b"k" * 32))
    proxy.extension(Apps())
    asked: list[str] = []

    def on_elicit(request: Any) -> dict[str, Any]:
        asked.append(request.message)
        return {"action": "accept", "content": {"ok": True}}

    async def go() -> Any:
        async with proxy.started(), rondo.Client(proxy, protocol=protocol, on_elicit=on_elicit,
                                                 extensions=[AppsClient()]) as host:
            linked = await tool_view(host, "orders")
            confirmed = await host.call_tool("confirm", {"order": 3})
            return linked, confirmed.text

    linked, confirmed = asyncio.run(asyncio.wait_for(go(), 60))
    assert linked.link.resource_uri == "ui://orders/table"
    assert linked.meta.csp is not None
    assert linked.meta.csp.connect_domains == ("https://api.example.com",)
    assert confirmed == "confirmed 3" and asked == ["Confirm the order?"]
