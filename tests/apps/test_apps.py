"""MCP Apps (`rondo.apps`): views as `ui://` resources, tools linked to them, the capability,
what a client without the extension sees, the client half's typed reading, and bad input
refused at registration or read. Raw messages go through `tests.helpers.helpers_core.Client`,
which validates every one against the official schema."""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rondo
from rondo.apps import EXTENSION, LEGACY_RESOURCE_URI, MIME_TYPE, Apps, AppsError, Csp, page
from rondo.apps.client import AppsClient, read_view, tool_view
from tests.helpers.components import binary, missing
from tests.helpers.helpers_core import Client as Raw
from tests.helpers.wire_schema import validate

PAGE = "<!doctype html><html><head><title>t</title></head><body><p>view</p></body></html>"
UI_CAPS = {"extensions": {EXTENSION: {"mimeTypes": [MIME_TYPE]}}}


def serve(**apps_options: Any) -> tuple[rondo.Server, Apps]:
    server = rondo.Server("apps-test", state=rondo.StatePolicy(secret=b"k" * 32))
    apps = server.extension(Apps(**apps_options))
    table = apps.view("ui://orders/table", html=PAGE, title="Orders",
                      csp=Csp(connect_domains=("https://api.example.com",),
                              resource_domains=("https://*.cdn.example",)),
                      permissions={"clipboardWrite": {}}, domain="orders.example-host.com",
                      prefers_border=True)

    @apps.tool(view=table)
    def orders(status: str = "open") -> dict[str, Any]:
        """List orders."""
        return {"status": status, "orders": [{"id": 1}, {"id": 2}]}

    @apps.tool(view=table, visibility=["app"])
    def refresh() -> str:
        """Refresh the table (the view's button)."""
        return "refreshed"

    @server.tool
    def plain() -> str:
        """A tool with no view."""
        return "plain"

    apps.check()
    return server, apps


def names(result: dict[str, Any]) -> list[str]:
    return [t["name"] for t in result["tools"]]


# -- the wire -----------------------------------------------------------------------------------


def test_the_extension_is_advertised_and_the_view_is_a_ui_resource_with_its_metadata() -> None:
    server, _ = serve()
    raw = Raw(server, caps=UI_CAPS)
    assert raw.result("server/discover")["capabilities"]["extensions"] == {EXTENSION: {}}
    listed = raw.result("resources/list")["resources"]
    ui = {"csp": {"connectDomains": ["https://api.example.com"],
                  "resourceDomains": ["https://*.cdn.example"]},
          "permissions": {"clipboardWrite": {}}, "domain": "orders.example-host.com",
          "prefersBorder": True}
    assert listed == [{"uri": "ui://orders/table", "name": "orders/table", "title": "Orders",
                       "mimeType": MIME_TYPE, "size": len(PAGE), "_meta": {"ui": ui}}]
    contents = raw.result("resources/read", {"uri": "ui://orders/table"})["contents"]
    # On the content item too: hosts that read only it would otherwise lose the CSP.
    assert contents == [{"uri": "ui://orders/table", "mimeType": MIME_TYPE, "text": PAGE,
                         "_meta": {"ui": ui}}]


def test_tools_carry_the_link_nested_and_flat_and_app_only_visibility() -> None:
    server, _ = serve()
    tools = {t["name"]: t for t in Raw(server, caps=UI_CAPS).result("tools/list")["tools"]}
    assert tools["orders"]["_meta"] == {"ui": {"resourceUri": "ui://orders/table"},
                                        LEGACY_RESOURCE_URI: "ui://orders/table"}
    assert tools["refresh"]["_meta"] == {
        "ui": {"resourceUri": "ui://orders/table", "visibility": ["app"]},
        LEGACY_RESOURCE_URI: "ui://orders/table"}
    assert "_meta" not in tools["plain"]


def test_a_client_without_the_extension_gets_working_tools() -> None:
    server, _ = serve()
    plain = Raw(server, caps={})
    listed = plain.result("tools/list")
    assert names(listed) == ["orders", "refresh", "plain"]  # one list for everyone
    assert listed["cacheScope"] == server.list_cache_scope
    result = plain.tool("orders", {"status": "done"})
    assert result["content"][0]["type"] == "text"
    assert '"status":"done"' in result["content"][0]["text"].replace(" ", "")


def test_hide_app_only_keeps_app_only_tools_from_clients_without_the_extension() -> None:
    server, _ = serve(hide_app_only=True)
    plain = Raw(server, caps={})
    listed = plain.result("tools/list")
    assert names(listed) == ["orders", "plain"]
    assert listed["cacheScope"] == "private"  # the list depends on who asks
    result = plain.tool("orders", {"status": "done"})
    assert result["content"][0]["type"] == "text"
    assert '"status":"done"' in result["content"][0]["text"].replace(" ", "")
    # The view's call is answered for anyone: visibility is the host's to enforce.
    assert plain.tool("refresh")["content"] == [{"type": "text", "text": "refreshed"}]
    assert names(Raw(server, caps=UI_CAPS).result("tools/list")) == ["orders", "refresh", "plain"]


def test_without_app_only_tools_the_list_is_not_made_private() -> None:
    server = rondo.Server("apps-public")
    apps = server.extension(Apps(hide_app_only=True))
    view = apps.view("ui://v", html=PAGE)
    apps.tool(lambda: "x", view=view, name="shown", description="d")
    listed = Raw(server, caps={}).result("tools/list")
    assert names(listed) == ["shown"] and listed["cacheScope"] == server.list_cache_scope


def _legacy(server: rondo.Server, caps: dict[str, Any]) -> Any:
    from rondo.testing import connect

    conn = connect(server)
    era = "2025-11-25"

    async def go() -> dict[str, Any]:
        out: dict[str, Any] = {}
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": era, "capabilities": caps,
            "clientInfo": {"name": "old-host", "version": "1"}}}
        out["initialize"] = await conn.send(init)
        await conn.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for rid, (method, params) in enumerate([
            ("tools/list", {}), ("resources/read", {"uri": "ui://orders/table"}),
            ("tools/call", {"name": "orders", "arguments": {}}),
            ("tools/call", {"name": "refresh"})], start=2):
            out[method + str(rid)] = await conn.send(
                {"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return out

    answers = asyncio.run(go())
    for key, message in answers.items():
        validate(message, era=era, method=key.rstrip("0123456789"))
    return answers


def test_the_2025_era_advertises_links_and_serves_the_view_and_its_calls() -> None:
    server, _ = serve(hide_app_only=True)
    answers = _legacy(server, UI_CAPS)
    assert answers["initialize"]["result"]["capabilities"]["extensions"] == {EXTENSION: {}}
    assert names(answers["tools/list2"]["result"]) == ["orders", "refresh", "plain"]
    read = answers["resources/read3"]["result"]["contents"][0]
    assert read["mimeType"] == MIME_TYPE and read["_meta"]["ui"]["prefersBorder"] is True
    assert answers["tools/call4"]["result"]["content"][0]["type"] == "text"
    assert answers["tools/call5"]["result"]["content"] == [{"type": "text", "text": "refreshed"}]
    assert names(_legacy(server, {})["tools/list2"]["result"]) == ["orders", "plain"]


# -- the client half ----------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
def test_the_client_reads_a_tools_view_typed_on_both_eras(protocol: str) -> None:
    server, _ = serve()

    async def go() -> Any:
        async with rondo.Client(server, protocol=protocol, extensions=[AppsClient()]) as client:
            linked = await tool_view(client, "orders")
            app_only = await tool_view(client, "refresh")
            none = await tool_view(client, "plain")
            return linked, app_only, none

    linked, app_only, none = asyncio.run(go())
    assert none is None
    assert linked.html == PAGE and linked.link.visibility == ("model", "app")
    assert app_only.link.visibility == ("app",) and not app_only.link.model_visible
    meta = linked.meta
    assert meta.csp is not None and meta.csp.connect_domains == ("https://api.example.com",)
    assert meta.csp.allows("https://img.cdn.example") and not meta.csp.allows("https://cdn.evil")
    assert meta.permissions is not None and meta.permissions.clipboard_write
    assert not meta.permissions.camera
    assert (meta.domain, meta.prefers_border) == ("orders.example-host.com", True)


def test_the_client_reads_blobs_and_falls_back_to_the_listings_metadata() -> None:
    server = rondo.Server("hand-made")

    @server.resource("ui://hand", mime_type=MIME_TYPE,
                     meta={"ui": {"csp": {"connectDomains": ["wss://live.example"]}}})
    def hand() -> dict[str, Any]:  # written by hand: a blob, metadata only on the listing
        return {"uri": "ui://hand", "mimeType": MIME_TYPE,
                "blob": base64.b64encode(PAGE.encode()).decode()}

    async def go() -> Any:
        async with rondo.Client(server, extensions=[AppsClient()]) as client:
            return await read_view(client, "ui://hand")

    view = asyncio.run(go())
    assert view.html == PAGE
    assert view.meta.csp is not None and view.meta.csp.connect_domains == ("wss://live.example",)


def test_the_client_declares_the_extension() -> None:
    seen: list[Any] = []
    server = rondo.Server("caps")

    @server.tool
    def caps(ctx: rondo.Context) -> str:
        """Say what the client declared."""
        seen.append(ctx.client_capabilities.get("extensions"))
        return "ok"

    async def go() -> None:
        async with rondo.Client(server, extensions=[AppsClient()]) as client:
            await client.call_tool("caps")

    asyncio.run(go())
    assert seen == [{EXTENSION: {"mimeTypes": [MIME_TYPE]}}]


# -- the view's calls are ordinary tools/call ----------------------------------------------------


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
def test_an_app_only_tool_that_asks_the_user_runs_its_input_round(protocol: str) -> None:
    server, apps = serve()
    form = rondo.elicit.form("Confirm?", {"type": "object",
                                          "properties": {"ok": {"type": "boolean"}},
                                          "required": ["ok"]})

    @apps.tool(view="ui://orders/table", visibility=["app"])
    async def cancel_order(order: int, ctx: rondo.Context) -> str:
        """Cancel an order once the user confirms (a button in the view)."""
        answer = await ctx.ask("confirm", form)
        return f"cancelled {order}" if answer.accepted and answer.content["ok"] else "kept"

    asked: list[str] = []

    def on_elicit(params: Any) -> dict[str, Any]:
        asked.append(params["message"] if isinstance(params, dict) else params.message)
        return {"action": "accept", "content": {"ok": True}}

    async def go() -> Any:
        async with rondo.Client(server, protocol=protocol, extensions=[AppsClient()],
                                on_elicit=on_elicit) as client:
            return await client.call_tool("cancel_order", {"order": 7})

    result = asyncio.run(go())
    assert result.content == [{"type": "text", "text": "cancelled 7"}] and asked == ["Confirm?"]


class _Tokens:
    """A verifier: token `writer` holds admin:write, `reader` admin:read."""

    cache_ttl = 0.0

    async def verify(self, token: str) -> Any:
        import time

        from rondo.auth import Principal

        return Principal.from_claims({"sub": "u", "iss": "https://sso.example.com/",
                                      "scope": {"writer": "admin:write"}.get(token, "admin:read"), "exp": time.time() + 60})


def test_an_app_only_tool_keeps_its_scopes_over_http() -> None:
    from rondo.auth import ResourceServer
    from tests.helpers.helpers_core import asgi_client, http_headers, request

    server = rondo.Server("guarded", state=rondo.StatePolicy(secret=b"k" * 32), auth=ResourceServer(
        resource="https://mcp.example.com/mcp", issuer="https://sso.example.com/",
        verifier=_Tokens()))
    apps = server.extension(Apps())
    view = apps.view("ui://admin", html=PAGE)
    apps.tool(lambda: "wiped", view=view, visibility=["app"], name="wipe", description="Wipe.",
              scopes=["admin:write"])
    app = server.asgi()

    async def go(token: str) -> Any:
        message = request("tools/call", {"name": "wipe"}, caps=UI_CAPS)
        async with asgi_client(app) as client:
            return await client.post("/mcp", json=message, headers={
                **http_headers(message), "authorization": f"Bearer {token}"})

    allowed = asyncio.run(go("writer"))
    assert allowed.status_code == 200
    assert allowed.json()["result"]["content"] == [{"type": "text", "text": "wiped"}]
    refused = asyncio.run(go("reader"))
    assert refused.status_code == 403 and "admin:write" in refused.headers["www-authenticate"]


def test_a_view_tool_goes_through_server_middleware_and_can_run_as_a_task() -> None:
    seen: list[str] = []

    async def audit(request: Any, call_next: Any) -> Any:
        result = await call_next(request)
        seen.append(f"{request.method} {request.name}")
        return result

    server = rondo.Server("mw", middleware=[audit], state=rondo.StatePolicy(secret=b"k" * 32))
    apps = server.extension(Apps())
    view = apps.view("ui://report", html=PAGE)

    @apps.tool(view=view, visibility=["app"], task="optional")
    async def rebuild(ctx: rondo.Context) -> str:
        """Rebuild the report (the view's button; long)."""
        await ctx.start_task("rebuilding")
        return "rebuilt"

    statuses: list[str] = []

    async def go() -> Any:
        tasks = rondo.tasks.TasksClient(on_status=lambda task: statuses.append(task["status"]))
        async with rondo.Client(server, tasks=tasks, extensions=[AppsClient()]) as client:
            return await client.call_tool("rebuild")

    assert asyncio.run(go()).text == "rebuilt"
    assert statuses[0] == "working" and statuses[-1] == "completed"
    assert "tools/call rebuild" in seen


# -- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("domain", [
    "api.example.com", "https://api.example.com/path", "https://api.example.com/",
    "https://a.example; script-src *", "'unsafe-inline'", "ftp://files.example",
    "https://a.example:99999", "https://*", "*", "https://a.example?x=1", " https://a.example",
])
def test_csp_entries_that_are_not_origins_are_refused(domain: str) -> None:
    with pytest.raises(AppsError, match="is not an origin|port out of range"):
        Csp(connect_domains=(domain,))
    apps = rondo.Server("s").extension(Apps())
    with pytest.raises(AppsError, match="is not an origin|port out of range"):
        apps.view("ui://v", html=PAGE, csp={"resourceDomains": [domain]})


@pytest.mark.parametrize("domain", ["https://a.example", "wss://live.a.example:8443",
                                    "http://localhost:5173", "https://*.a.example",
                                    "http://[::1]:8080", "http://127.0.0.1:9"])
def test_origins_are_accepted(domain: str) -> None:
    assert Csp(frame_domains=(domain,)).frame_domains == (domain,)


@pytest.mark.parametrize(("options", "message"), [
    ({"csp": {"connectDomains": "https://a.example"}}, "must be a list of origins"),
    ({"csp": ["https://a.example"]}, "csp must be an object"),
    ({"csp": {"frameDomains": {"https://a.example": 1}}}, "must be a list of origins, got dict"),
    ({"permissions": {"camera": True}}, r"permissions.camera must be an object"),
    ({"permissions": "camera"}, "permissions must be an object"),
    ({"prefers_border": "yes"}, "prefersBorder must be a bool"),
    ({"domain": "has space.example"}, "domain must be"),
])
def test_metadata_of_the_wrong_shape_is_refused_at_registration(options: dict[str, Any],
                                                                message: str) -> None:
    apps = rondo.Server("s").extension(Apps())
    with pytest.raises(AppsError, match=message):
        apps.view("ui://v", html=PAGE, **options)


@pytest.mark.parametrize(("uri", "html", "message"), [
    ("https://not-ui", PAGE, "fixed ui:// URI"),
    ("ui://", PAGE, "fixed ui:// URI"),
    ("ui://t/{id}", PAGE, "fixed ui:// URI"),
    ("ui://v", "<html><body>no doctype</body></html>", "starting with <!doctype html>"),
    ("ui://v", PAGE.replace("<p>", '<script src="app.js"></script><p>'), "relative path"),
    ("ui://v", PAGE.replace("<p>", '<link rel="stylesheet" href="/assets/a.css"><p>'),
     "relative path"),
    ("ui://v", PAGE.replace("<p>", '<script src="https://cdn.other/x.js"></script><p>'),
     "does not declare: add it to csp.resource_domains"),
    ("ui://v", PAGE.replace("<p>", '<iframe src="https://www.youtube.com/embed/1"></iframe><p>'),
     "csp.frame_domains"),
])
def test_bad_views_are_refused_at_registration(uri: str, html: str, message: str) -> None:
    apps = rondo.Server("s").extension(Apps())
    with pytest.raises(AppsError, match=message):
        apps.view(uri, html=html)


def test_declared_outside_assets_are_allowed() -> None:
    apps = rondo.Server("s").extension(Apps())
    html = PAGE.replace("<p>", '<script src="https://js.cdn.example/app.js"></script><p>')
    view = apps.view("ui://v", html=html, csp=Csp(resource_domains=("https://*.cdn.example",)))
    assert view.html == html


def test_html_too_large_is_refused_at_registration_and_at_read() -> None:
    big = PAGE.replace("<p>view</p>", "<p>" + "x" * 2000 + "</p>")
    apps = rondo.Server("s").extension(Apps(max_bytes=1000))
    with pytest.raises(AppsError, match=r"over the 1000-byte limit \(max_bytes=\)"):
        apps.view("ui://big", html=big)
    server = rondo.Server("s2")
    ok = server.extension(Apps()).view("ui://big", html=big)
    assert ok.html == big

    async def go() -> None:
        async with rondo.Client(server, extensions=[AppsClient()]) as client:
            await read_view(client, "ui://big", max_bytes=1000)

    with pytest.raises(AppsError, match="over the 1000-byte limit"):
        asyncio.run(go())


def test_views_from_files_and_bundles(tmp_path: Path) -> None:
    (tmp_path / "page.html").write_text(PAGE)
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "index.html").write_text(PAGE)
    apps = rondo.Server("s").extension(Apps())
    assert apps.view("ui://file", file=tmp_path / "page.html").html == PAGE
    assert apps.view("ui://bundle", bundle=tmp_path / "dist").html == PAGE
    with pytest.raises(AppsError, match="not a directory"):
        apps.view("ui://b2", bundle=tmp_path / "page.html")
    with pytest.raises(AppsError, match="cannot read the view's HTML"):
        apps.view("ui://b3", file=tmp_path / "missing.html")
    with pytest.raises(AppsError, match="exactly one of html=, file=, bundle="):
        apps.view("ui://b4", html=PAGE, file=tmp_path / "page.html")
    with pytest.raises(AppsError, match="declared twice"):
        apps.view("ui://file", html=PAGE)


def test_links_to_views_that_do_not_exist_or_are_not_views_fail() -> None:
    server = rondo.Server("s")
    apps = server.extension(Apps())
    with pytest.raises(AppsError, match="no view 'ui://nowhere' is declared"):
        apps.tool(lambda: "x", view="ui://nowhere", name="t")
    view = apps.view("ui://v", html=PAGE)
    with pytest.raises(AppsError, match="visibility must be a non-empty list"):
        apps.tool(lambda: "x", view=view, visibility=["user"], name="t")
    with pytest.raises(AppsError, match="must not carry 'ui'"):
        apps.tool(lambda: "x", view=view, meta={"ui": {}}, name="t")
    # Links written by hand are checked when the server starts.
    server.tool(lambda: "x", name="hand", meta={"ui": {"resourceUri": "ui://gone"}})
    with pytest.raises(AppsError, match=r"tool 'hand' renders in ui://gone, which the server"):
        apps.check()
    server.remove_tool("hand")
    server.resource("ui://html", mime_type="text/html")(lambda: PAGE)
    server.tool(lambda: "x", name="wrong", meta={LEGACY_RESOURCE_URI: "ui://html"})
    with pytest.raises(AppsError, match="served as 'text/html', not 'text/html;profile=mcp-app'"):
        apps.check()

    async def started() -> None:
        async with server.started():
            pass

    with pytest.raises(AppsError, match="tool 'wrong'"):
        asyncio.run(started())


def test_apps_tool_before_install_says_so() -> None:
    with pytest.raises(AppsError, match=r"install the extension first"):
        Apps().tool(lambda: "x", view="ui://v")


@pytest.mark.parametrize(("served", "message"), [
    ({"mimeType": "text/html", "text": PAGE}, "served as 'text/html'"),
    ({"mimeType": MIME_TYPE, "text": PAGE, "_meta": {"ui": {"csp": {"connectDomains":
                                                                     ["evil; x"]}}}},
     "is not an origin"),
    ({"mimeType": MIME_TYPE, "text": PAGE, "_meta": {"ui": "csp"}}, "_meta.ui must be an object"),
    ({"mimeType": MIME_TYPE, "blob": "!!!"}, "not base64"),
    ({"mimeType": MIME_TYPE}, "neither text nor blob"),
])
def test_the_client_refuses_views_a_host_must_not_render(served: dict[str, Any],
                                                         message: str) -> None:
    server = rondo.Server("hostile")

    @server.resource("ui://bad")
    def bad() -> dict[str, Any]:
        if "text" in served or "blob" in served:
            return {"uri": "ui://bad", **served}
        return {"uri": "ui://bad", **served, "text": None}  # neither: what a broken server sends

    async def go() -> None:
        async with rondo.Client(server, extensions=[AppsClient()]) as client:
            await read_view(client, "ui://bad")

    with pytest.raises(AppsError, match=message):
        asyncio.run(go())


def test_the_client_names_unknown_views_and_tools() -> None:
    server, _ = serve()

    async def go(what: str) -> None:
        async with rondo.Client(server, extensions=[AppsClient()]) as client:
            if what == "view":
                await read_view(client, "ui://nowhere")
            elif what == "tool":
                await tool_view(client, "nowhere")
            else:
                await read_view(client, "https://example.com/x")

    with pytest.raises(AppsError, match=r"did not serve view ui://nowhere: Resource not found"):
        asyncio.run(go("view"))
    with pytest.raises(AppsError, match="lists no tool 'nowhere'"):
        asyncio.run(go("tool"))
    with pytest.raises(AppsError, match="fixed ui:// URI"):
        asyncio.run(go("uri"))


# -- the authoring helper -----------------------------------------------------------------------

WIRING_SCRIPT = """
view.onInput((args) => record("input", args));
view.onPartialInput((args) => record("partial", args));
view.onHostContext((context) => record("context", context.theme));
view.onCancelled((reason) => record("cancelled", reason));
view.onTeardown(() => new Promise((resolve) => { record("teardown", null); setTimeout(resolve, 0); }));
view.onResult((result) => {
  record("result", view.data(result));
  record("late-input", null);
  view.onInput((args) => record("input-again", args));  // set late: called at once
  view.call("price", {item: "tea"}).then((r) => {
    record("called", view.text(r));
    return view.call("nope");
  }).catch((e) => {
    record("error", [e.code, e.message]);
    view.openLink("https://example.com/docs");
    view.message("tea is out");
    view.log("info", {left: 0});
  });
});
"""


def test_the_built_in_wiring_speaks_the_extensions_protocol(tmp_path: Path) -> None:
    page_file = tmp_path / "page.html"
    page_file.write_text(page(title="Orders", body="<div id='t'></div>", script=WIRING_SCRIPT))
    run = subprocess.run([binary("node", "nodejs"), str(Path(__file__).with_name("wiring_host.mjs")),
                          str(page_file)],
                         capture_output=True, text=True, timeout=60, check=True)
    seen = json.loads(run.stdout)
    posted = seen["posted"]
    assert posted[0] == {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {
        "protocolVersion": "2026-01-26", "appInfo": {"name": "rondo-view", "version": "1.0.0"},
        "appCapabilities": {}}}
    assert posted[1] == {"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}}
    assert posted[2] == {"jsonrpc": "2.0", "method": "ui/notifications/size-changed",
                         "params": {"width": 321, "height": 200}}
    assert posted[3] == {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                         "params": {"name": "price", "arguments": {"item": "tea"}}}
    assert posted[4] == {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                         "params": {"name": "nope", "arguments": {}}}
    assert posted[5:8] == [  # a log goes at once; requests wait for the handshake's promise
        {"jsonrpc": "2.0", "method": "notifications/message",
         "params": {"level": "info", "data": {"left": 0}}},
        {"jsonrpc": "2.0", "id": 4, "method": "ui/open-link",
         "params": {"url": "https://example.com/docs"}},
        {"jsonrpc": "2.0", "id": 5, "method": "ui/message",
         "params": {"role": "user", "content": [{"type": "text", "text": "tea is out"}]}}]
    # ping answered at once; teardown once its handler's promise settled; the rest refused.
    assert posted[8:] == [
        {"jsonrpc": "2.0", "id": 99, "result": {}},
        {"jsonrpc": "2.0", "id": 101, "error": {"code": -32601, "message": "Method not found"}},
        {"jsonrpc": "2.0", "id": 100, "result": {}}]
    assert seen["events"] == [
        ["context", "dark"],  # from the handshake
        ["context", "light"],  # the host's change, merged
        ["partial", {"item": "te"}],
        ["input", {"item": "tea"}],  # the stranger's forged input never arrived
        ["result", {"rows": [{"id": 1}]}],
        ["late-input", None],
        ["input-again", {"item": "tea"}],
        ["called", "3 EUR"],
        ["error", [-32602, "Unknown tool: nope"]],
        ["cancelled", "user stopped it"],
        ["teardown", None]]
    assert seen["origins"] == ["*"]


def test_page_renders_one_self_contained_document_that_registers_as_a_view() -> None:
    apps = rondo.Server("s").extension(Apps())
    html = page(title="A <b> title", body="<form id='f'></form>", style="body{margin:0}",
                script="view.onResult(() => {});")
    assert html.startswith("<!doctype html>") and "<title>A &lt;b&gt; title</title>" in html
    assert "src=" not in html and "<style>body{margin:0}</style>" in html
    assert apps.view("ui://form", html=html).html == html


def test_page_with_the_official_sdk_by_url_needs_its_origin_declared() -> None:
    sdk = "https://cdn.example.com/ext-apps@2.0.4/app-with-deps.js"
    html = page(script="view.onInput(() => {});", sdk=sdk)
    assert f'import {{ App }} from "{sdk}";' in html and "new App(appInfo" in html
    apps = rondo.Server("s").extension(Apps())
    with pytest.raises(AppsError, match="loads from https://cdn.example.com, which the view "
                                        "does not declare"):
        apps.view("ui://sdk", html=html)
    declared = apps.view("ui://sdk", html=html,
                         csp=Csp(resource_domains=("https://cdn.example.com",)))
    assert declared.meta.csp is not None


def test_page_with_the_official_sdk_inlined_loads_nothing() -> None:
    bundle = "var McpApps = (() => { class App {} return {App, s: '</script>'}; })();"
    html = page(script="", sdk_script=bundle)
    assert "<\\/script>'" in html and "const { App } = McpApps;" in html
    assert rondo.Server("s").extension(Apps()).view("ui://inl", html=html).html == html


@pytest.mark.parametrize(("options", "message"), [
    ({"script": "x = '</script><script>alert(1)'"}, "must not contain '</script'"),
    ({"style": "</style><script>"}, "must not contain"),
    ({"sdk": "javascript:alert(1)"}, "sdk must be an http"),
    ({"sdk": "https://a.example/x.js\"onload=\"x"}, "sdk must be an http"),
    ({"sdk": "https://a.example/x.js", "sdk_script": "McpApps"}, "not both"),
    ({"sdk_script": "window.App = 1"}, "global McpApps"),
    ({"title": 3}, "title must be a str"),
])
def test_page_refuses_what_would_break_out_of_the_page(options: dict[str, Any],
                                                       message: str) -> None:
    with pytest.raises(AppsError, match=message):
        page(**options)


# -- against the extension's own schema (the ext-apps package's schema.json) ----------------------

EXT_SCHEMA = (Path(__file__).resolve().parents[2] / "interop" / "node_modules" / "@modelcontextprotocol"
              / "ext-apps" / "dist" / "src" / "generated" / "schema.json")


def ext_schema() -> dict[str, Any]:
    """The extension's schema.json, or a failure naming the set-up that installs it."""
    if not EXT_SCHEMA.is_file():
        missing("interop/node_modules/@modelcontextprotocol/ext-apps", "cd interop && npm ci")
    document: dict[str, Any] = json.loads(EXT_SCHEMA.read_text())
    return document


def ext_valid(definition: str, value: Any) -> None:
    from jsonschema import Draft202012Validator

    schema = {**ext_schema(), "$ref": f"#/$defs/{definition}"}
    errors = [e.message for e in Draft202012Validator(schema).iter_errors(value)]
    assert errors == [], f"{definition}: {errors}"


def test_the_metadata_rondo_sends_is_valid_for_the_extensions_schema() -> None:
    server, _ = serve()
    raw = Raw(server, caps=UI_CAPS)
    linked = [tool["_meta"]["ui"] for tool in raw.result("tools/list")["tools"] if "_meta" in tool]
    assert linked, "serve() links at least one tool to a view"
    for meta in linked:
        ext_valid("McpUiToolMeta", meta)
    [listed] = raw.result("resources/list")["resources"]
    ext_valid("McpUiResourceMeta", listed["_meta"]["ui"])
    [item] = raw.result("resources/read", {"uri": "ui://orders/table"})["contents"]
    ext_valid("McpUiResourceMeta", item["_meta"]["ui"])
    ext_valid("McpUiClientCapabilities", AppsClient().capability)


def test_what_the_built_in_wiring_sends_is_valid_for_the_extensions_schema(tmp_path: Path) -> None:
    page_file = tmp_path / "page.html"
    page_file.write_text(page(script=WIRING_SCRIPT))
    run = subprocess.run([binary("node", "nodejs"), str(Path(__file__).with_name("wiring_host.mjs")),
                          str(page_file)],
                         capture_output=True, text=True, timeout=60, check=True)
    posted = json.loads(run.stdout)["posted"]
    kinds = {"ui/initialize": "McpUiInitializeRequest",
             "ui/notifications/initialized": "McpUiInitializedNotification",
             "ui/notifications/size-changed": "McpUiSizeChangedNotification",
             "ui/open-link": "McpUiOpenLinkRequest", "ui/message": "McpUiMessageRequest"}
    checked = []
    for message in posted:
        if message.get("method") in kinds:
            ext_valid(kinds[message["method"]],
                      {k: v for k, v in message.items() if k in ("method", "params")})
            checked.append(message["method"])
    assert checked == list(kinds)


# -- the policy a host builds ---------------------------------------------------------------------


def test_the_policy_is_the_extensions_default_without_a_csp_and_the_declared_origins_with_one(
) -> None:
    from rondo.apps import ViewMeta

    assert ViewMeta().policy() == (
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; "
        "object-src 'none'; base-uri 'self'")
    declared = ViewMeta(csp=Csp(connect_domains=("wss://live.example",),
                                resource_domains=("https://*.cdn.example",),
                                frame_domains=("https://www.youtube.com",)))
    assert declared.policy() == (
        "default-src 'none'; script-src 'self' 'unsafe-inline' https://*.cdn.example; "
        "style-src 'self' 'unsafe-inline' https://*.cdn.example; "
        "connect-src 'self' wss://live.example; img-src 'self' data: https://*.cdn.example; "
        "font-src 'self' https://*.cdn.example; media-src 'self' data: https://*.cdn.example; "
        "frame-src https://www.youtube.com; object-src 'none'; base-uri 'self'")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(codec="ascii"), max_size=40)
                | st.from_regex(r"\A(https?|wss?)://[a-z0-9.*-]{1,30}(:[0-9]{1,6})?\Z"),
                max_size=4))
def test_no_csp_entry_can_add_a_directive_or_a_keyword(entries: list[str]) -> None:
    from rondo.apps import ViewMeta

    try:
        csp = Csp(connect_domains=tuple(entries))
    except AppsError:
        return
    policy = ViewMeta(csp=csp).policy()
    directives = [d.split(" ") for d in policy.split("; ")]
    assert [d[0] for d in directives] == [
        "default-src", "script-src", "style-src", "connect-src", "img-src", "font-src",
        "media-src", "frame-src", "object-src", "base-uri"]
    connect = directives[3][1:]
    assert connect == ["'self'", *entries]
    assert all("'" not in e and ";" not in e and "," not in e and " " not in e for e in entries)


# -- parsers: bounded, and only AppsError -------------------------------------------------------


def test_checking_a_hostile_page_is_linear() -> None:
    import time

    from rondo.apps.view import check_html

    hostile = ("<!doctype html>" + "<img a" * 170_000).encode()  # ~1 MB of unclosed tags
    started = time.perf_counter()
    check_html(hostile, where="v", max_bytes=2_000_000, csp=None)
    # Quadratic scanning (each <img re-scanning to the end) would take hours here.
    assert time.perf_counter() - started < 10


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=30),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.sampled_from(["ui", "ui/resourceUri", "resourceUri",
                                                       "visibility", "csp", "connectDomains",
                                                       "permissions", "camera", "domain",
                                                       "prefersBorder", "x"]), inner,
                                      max_size=5),
                    max_leaves=12)
# Link-shaped values (random JSON almost never is one), so ToolLink's round trip is reached too.
LINKISH = st.fixed_dictionaries(
    {"ui": st.fixed_dictionaries(
        {"resourceUri": st.sampled_from(["ui://orders/table", "ui://x", "https://x", ""])},
        optional={"visibility": st.lists(st.sampled_from(["model", "app", "x"]), max_size=3)
                  | JSON})},
    optional={"ui/resourceUri": st.sampled_from(["ui://orders/table", "ui://other"]) | JSON})


@settings(max_examples=400, deadline=None)
@given(JSON | LINKISH)
def test_parsing_any_json_as_metadata_gives_values_or_apps_error(value: Any) -> None:
    from rondo.apps import ToolLink, ViewMeta

    for parse in (ToolLink.parse, ViewMeta.parse):
        try:
            parsed = parse(value)
        except AppsError:
            continue
        if isinstance(parsed, ViewMeta):
            assert ViewMeta.parse(parsed.wire()) == parsed  # what parses, round-trips
        elif isinstance(parsed, ToolLink):
            assert ToolLink.parse(parsed.wire()) == parsed


def test_an_unknown_view_is_the_servers_resource_not_found_error() -> None:
    server, _ = serve()
    error = Raw(server, caps=UI_CAPS).error("resources/read", {"uri": "ui://nowhere"})
    assert error["code"] == -32602 and error["data"] == {"uri": "ui://nowhere"}


def test_what_the_asset_check_lets_through_and_the_odd_inputs_it_refuses() -> None:
    from rondo.apps.view import check_html

    apps = rondo.Server("s").extension(Apps())
    fine = PAGE.replace("<p>", '<link rel="icon" href="favicon.ico"><img src="data:image/png;base64,AA">'
                                '<img src="#x"><p>')
    assert apps.view("ui://fine", html=fine).html == fine  # an icon a host may drop; inline data
    with pytest.raises(AppsError, match="only http\\(s\\) origins can be declared"):
        apps.view("ui://ftp", html=PAGE.replace("<p>", '<img src="ftp://files.example/a.png"><p>'))
    with pytest.raises(AppsError, match="the HTML is not UTF-8"):
        check_html(b"<!doctype html>\xff", where="v", max_bytes=100, csp=None)
    with pytest.raises(AppsError, match="html= must be a str"):
        apps.view("ui://bytes", html=PAGE.encode())  # type: ignore[arg-type]
    with pytest.raises(AppsError, match="max_bytes must be a positive integer"):
        apps.view("ui://zero", html=PAGE, max_bytes=0)
    assert repr(apps.views["ui://fine"]) == f"<View ui://fine {len(fine)} chars>"


def test_tool_visibility_reads_the_tools_own_word_with_or_without_a_view() -> None:
    from rondo.apps import tool_visibility

    assert tool_visibility(None) == ("model", "app")
    assert tool_visibility({"other": 1}) == ("model", "app")
    assert tool_visibility({"ui": {"visibility": ["model"]}}) == ("model",)  # no view named
    assert tool_visibility({"ui": {"resourceUri": "ui://v", "visibility": ["app"]}}) == ("app",)
    assert tool_visibility({LEGACY_RESOURCE_URI: "ui://v"}) == ("model", "app")
    with pytest.raises(AppsError, match="visibility must be a list"):
        tool_visibility({"ui": {"visibility": "app"}})
    with pytest.raises(AppsError, match="_meta.ui must be an object"):
        tool_visibility({"ui": ["app"]})


def test_a_csp_list_holds_at_most_64_origins() -> None:
    many = tuple(f"https://h{i}.example" for i in range(65))
    assert len(Csp(connect_domains=many[:64]).connect_domains) == 64
    with pytest.raises(AppsError, match="at most 64 origins"):
        Csp(connect_domains=many)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40), st.text(max_size=40), st.text(max_size=60))
def test_no_name_or_title_can_end_the_pages_script(name: str, version: str, title: str) -> None:
    html = page(title=title, app_name=name, app_version=version, script="view.onInput(() => {});")
    lowered = html.lower()
    assert lowered.count("</script") == 1 and lowered.count("<script") == 1
    assert lowered.count("</title") == 1 and "<!--" not in html
    assert html.startswith("<!doctype html>")


def test_reload_serves_a_changed_file_and_refuses_a_broken_one_clearly(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    built = tmp_path / "dist"
    built.mkdir()
    (built / "index.html").write_text(PAGE)
    server = rondo.Server("dev")
    apps = server.extension(Apps())
    apps.view("ui://dev", bundle=built, reload=True)
    raw = Raw(server, caps=UI_CAPS)
    [listed] = raw.result("resources/list")["resources"]
    assert "size" not in listed  # it may change
    assert raw.result("resources/read", {"uri": "ui://dev"})["contents"][0]["text"] == PAGE
    rebuilt = PAGE.replace("view", "view, rebuilt")
    (built / "index.html").write_text(rebuilt)
    assert raw.result("resources/read", {"uri": "ui://dev"})["contents"][0]["text"] == rebuilt
    (built / "index.html").write_text("<p>half-written</p>")
    with caplog.at_level("WARNING", logger="rondo.apps"):
        error = raw.error("resources/read", {"uri": "ui://dev"})
    assert error["code"] == -32603
    assert error["message"] == ("view ui://dev cannot be served: its file changed and no longer "
                                "passes the view checks (see the server log)")
    assert "starting with <!doctype html>" in caplog.text  # the reason, for the developer
    (built / "index.html").write_text(rebuilt + " ")
    assert raw.result("resources/read", {"uri": "ui://dev"})["contents"][0]["text"] == rebuilt + " "
    with pytest.raises(AppsError, match="reload=True needs file= or bundle="):
        apps.view("ui://inline", html=PAGE, reload=True)
