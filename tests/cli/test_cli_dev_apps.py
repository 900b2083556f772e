"""`rondo dev` hosting a tool's view (MCP Apps), in process: the view is read and checked, its
Content-Security-Policy built only from origins it declared, its sandbox document served only on
the other loopback name under that policy, and a view's call refused for a tool it may not see.
The real browser run is tests/cli/test_cli_dev_apps_browser.py."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

import rondo
from rondo.apps import MAX_BYTES
from rondo.cli.dev import Bridge, DevApp
from rondo.cli.dev_apps import ViewError, load_bridge, sandbox_host

SECRET = "s3cret-for-this-run"
MIME = "text/html;profile=mcp-app"
BUNDLE = b"/* @modelcontextprotocol/ext-apps 2.0.4 app-bridge */\nvar McpAppsHost=(()=>{class AppBridge{}})();\n"
PAGE_HOST = "127.0.0.1:5555"


def _server(view_meta: dict[str, Any] | None = None, mime: str = MIME, html: str = "<!doctype html><p>hi</p>",
            uri: str = "ui://t/view") -> rondo.Server:
    server = rondo.Server("views", state=None)

    @server.resource(uri, mime_type=mime, meta={"ui": view_meta} if view_meta is not None else None)
    def view() -> str:
        return html

    @server.tool(meta={"ui": {"resourceUri": uri}})
    def shown(item: str) -> str:
        return f"shown {item}"

    @server.tool(meta={"ui": {"resourceUri": uri, "visibility": ["model"]}})
    def model_only() -> str:
        return "only the model calls this"

    @server.tool(meta={"ui": {"resourceUri": uri, "visibility": ["app"]}})
    def app_only() -> str:
        return "a view's"

    @server.tool(meta={"ui": {"visibility": ["model"]}})  # model-only, naming no view
    def model_only_no_view() -> str:
        return "only the model calls this either"

    return server


async def _with(server: rondo.Server, go: Any, apps: bytes | None = BUNDLE) -> Any:
    async with server.started(), Bridge(server, apps=apps) as bridge:
        transport = httpx.ASGITransport(app=DevApp(bridge, SECRET))
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{PAGE_HOST}") as http:
            return await go(http)


async def _op(http: httpx.AsyncClient, op: str, **body: Any) -> dict[str, Any]:
    answer = await http.post(f"/api/{op}", json=body, headers={"x-rondo-dev-secret": SECRET,
                                                               "origin": f"http://{PAGE_HOST}"})
    data: dict[str, Any] = answer.json()
    # A refusal is a 400 naming why; anything else is a 200 with the operation's answer.
    assert answer.status_code == (400 if "error" in data else 200), answer.text
    return data


def test_a_view_is_served_in_its_sandbox_on_the_other_name_under_its_declared_policy() -> None:
    server = _server({"csp": {"resourceDomains": ["https://cdn.example.com"],
                              "connectDomains": ["https://api.example.com", "wss://live.example.com"]}})

    async def go(http: httpx.AsyncClient) -> tuple[Any, ...]:
        offer = await _op(http, "offer")
        view = await _op(http, "view", tool="shown")
        sandbox = view["sandbox"].removeprefix("http://localhost:5555")
        on_page_name = await http.get(sandbox)  # the page's own origin never serves a view
        served = await http.get(sandbox, headers={"host": "localhost:5555"})
        script = await http.get("/apps/sandbox.js", headers={"host": "localhost:5555"})
        bridge = await http.get("/apps/bridge.js")
        page = await http.get("/")
        return offer, view, on_page_name, served, script, bridge, page

    offer, view, on_page_name, served, script, bridge, page = asyncio.run(_with(server, go))
    assert offer["apps"] is True
    assert view["uri"] == "ui://t/view" and view["html"] == "<!doctype html><p>hi</p>"
    assert view["sandbox"].startswith("http://localhost:5555/apps/sandbox/")
    assert on_page_name.status_code == 404
    assert served.status_code == 200 and b'data-host-origin="http://127.0.0.1:5555"' in served.content
    csp = served.headers["content-security-policy"]
    assert "script-src 'self' 'unsafe-inline' https://cdn.example.com;" in csp
    assert "img-src 'self' data: https://cdn.example.com;" in csp
    assert "connect-src 'self' https://api.example.com wss://live.example.com;" in csp
    assert "frame-src 'none'" in csp and "default-src 'none'" in csp
    assert csp.endswith("; form-action 'none'; frame-ancestors http://127.0.0.1:5555")  # only the page frames it
    assert script.status_code == 200 and b"sandbox-proxy-ready" in script.content
    assert bridge.content == BUNDLE
    page_csp = page.headers["content-security-policy"]  # the page: the bundle, frames from the sandbox
    assert "script-src 'self' 'unsafe-inline'" in page_csp and "frame-src http://localhost:5555;" in page_csp


def test_without_a_bridge_nothing_of_apps_is_served_or_declared() -> None:
    async def go(http: httpx.AsyncClient) -> tuple[Any, ...]:
        return (await _op(http, "offer"), await _op(http, "view", tool="shown"),
                await http.get("/apps/bridge.js"), await http.get("/"))

    offer, view, bridge, page = asyncio.run(_with(_server({}), go, apps=None))
    assert offer["apps"] is False
    assert "views are not hosted" in view["error"]
    assert bridge.status_code == 404
    assert "frame-src" not in page.headers["content-security-policy"]


def test_a_view_calls_only_tools_visible_to_views() -> None:
    async def go(http: httpx.AsyncClient) -> tuple[Any, ...]:
        view = await _op(http, "view", tool="shown")
        return (await _op(http, "call", name="app_only", view=view["id"]),
                await _op(http, "call", name="shown", arguments={"item": "x"}, view=view["id"]),
                await _op(http, "call", name="model_only", view=view["id"]),
                await _op(http, "call", name="app_only", view="not-a-view"),
                await _op(http, "call", name="model_only_no_view", view=view["id"]))

    app_only, both, model_only, stranger, no_view = asyncio.run(_with(_server({}), go))
    assert app_only["content"][0]["text"] == "a view's"
    assert app_only["isError"] is False  # a success, said as false (never null, for the bridge)
    assert None not in app_only.values()
    assert both["content"][0]["text"] == "shown x"
    assert "not visible to views" in model_only["error"]
    assert "unknown view" in stranger["error"]
    assert "not visible to views" in no_view["error"]  # its visibility holds without a view


@pytest.mark.parametrize(("server", "why"), [
    (_server({}, mime="text/html"), "not 'text/html;profile=mcp-app'"),
    (_server({"csp": {"connectDomains": ["https://ok.example.com/path"]}}), "not an origin"),
    (_server({"csp": {"resourceDomains": ["https://a.example.com; script-src *"]}}), "not an origin"),
    (_server({"csp": {"resourceDomains": "https://a.example.com"}}), "must be a list"),
    (_server({"csp": ["https://a.example.com"]}), "must be an object"),
    (_server({}, html="x" * (MAX_BYTES + 1)), "-byte limit"),
    (_server({}, uri="https://t.example.com/view"), "must be a fixed ui:// URI"),
])
def test_a_view_the_host_must_not_render_is_refused_with_why(server: rondo.Server, why: str) -> None:
    async def go(http: httpx.AsyncClient) -> dict[str, Any]:
        return await _op(http, "view", tool="shown")

    refused = asyncio.run(_with(server, go))
    assert why in refused["error"]
    assert "id" not in refused  # nothing kept for a sandbox to serve


@pytest.mark.parametrize(("page", "sandbox"), [
    ("127.0.0.1:5555", "localhost:5555"), ("localhost:5555", "127.0.0.1:5555"),
    ("[::1]:80", "localhost:80"), ("127.0.0.1", "localhost"),
])
def test_the_sandbox_is_always_on_the_other_loopback_name(page: str, sandbox: str) -> None:
    assert sandbox_host(page) == sandbox


def test_a_bridge_that_is_not_the_ext_apps_bundle_fails_at_start_up(tmp_path: Path) -> None:
    other = tmp_path / "other.js"
    other.write_text("console.log('not the bridge')")
    with pytest.raises(ViewError, match="is not a browser bundle"):
        load_bridge(other)
    with pytest.raises(ViewError, match="cannot read the apps bridge"):
        load_bridge(tmp_path / "absent.js")
    done = subprocess.run([sys.executable, "-m", "rondo", "dev", "x.py", "--apps-bridge", str(other)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "is not a browser bundle" in done.stderr
    done = subprocess.run([sys.executable, "-m", "rondo", "dev", "x.py", "--protocol", "1999-01-01"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "unknown protocol version '1999-01-01'" in done.stderr
