"""Mount transforms: rename, hide, re-describe, filter by tags, per-principal visibility, on a
mounted rondo.Server and on a mounted proxy of an upstream on loopback HTTP; every surface that
carries a name agrees (lists, calls, Mcp-Name over HTTP, completion refs, input rounds)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import rondo
from rondo import elicit
from rondo.client import Client
from rondo.gateway import from_mcp_json, mount, tags
from rondo.testing import principal
from tests.helpers.gateway_upstream import served
from tests.helpers.polling import until

ERAS = ["2025-11-25", "2026-07-28"]
CITY = elicit.form("Which city?", {"type": "object", "properties": {"city": {"type": "string"}},
                                   "required": ["city"]})


def oslo(request: Any) -> Any:
    return {"action": "accept", "content": {"city": "Oslo"}}


def child_server() -> rondo.Server:
    child = rondo.Server("weather")

    @child.tool(tags={"public"})
    def forecast(ctx: rondo.Context) -> str:
        """Asks which city."""
        return f"sunny in {ctx.ask('city', CITY).content['city']}"

    @child.tool(tags=["public", "read"])
    def alerts() -> str:
        """Alerts."""
        return "none"

    @child.tool
    def debug() -> str:
        """Internal."""
        return "internals"

    @child.tool(tags={"admin"})
    def purge() -> str:
        """Admins only."""
        return "purged"

    @child.prompt(tags={"public"})
    def report(city: str) -> str:
        """A report."""
        return f"report for {city}"

    @child.resource("weather://today", mime_type="text/plain", tags={"public"})
    def today() -> str:
        """Today."""
        return "sunny"

    @child.resource("weather://secret", mime_type="text/plain")
    def secret() -> str:
        """Not tagged."""
        return "hidden"

    @child.completion
    def complete(ref: dict[str, Any], argument: dict[str, Any], context: Any) -> list[str]:
        return [f"{ref.get('name')}:{argument.get('value')}"]

    return child


@pytest.mark.parametrize("protocol", ERAS)
def test_rename_hide_describe_and_tags_on_a_mounted_server(protocol: str) -> None:
    parent = rondo.Server("app")
    mount(parent, child_server(), namespace="w", rename={"forecast": "outlook"},
          hide={"alerts"}, describe={"outlook": "ignored: describe takes the child's name",
                                     "forecast": "Three days ahead.",
                                     "weather://today": "Today, in brief."},
          tags={"public"})

    async def go() -> None:
        async with Client(parent, protocol=protocol, on_elicit=oslo) as client:
            tools = {t.name: t.description for t in await client.list_tools()}
            # forecast renamed and re-described; alerts hidden; debug and purge lack the tag.
            assert tools == {"w_outlook": "Three days ahead."}
            assert (await client.call_tool("w_outlook")).text == "sunny in Oslo"  # a round
            for gone in ("w_forecast", "w_alerts", "w_debug", "w_purge"):
                with pytest.raises(rondo.McpError, match=f"Unknown tool: {gone}"):
                    await client.call_tool(gone)
            assert [p.name for p in await client.list_prompts()] == ["w_report"]
            resources = {r.uri: r.description for r in await client.list_resources()}
            assert resources == {"weather://today": "Today, in brief."}
            done = await client.complete({"type": "ref/prompt", "name": "w_report"}, "city", "Os")
            assert done.values == ["report:Os"]  # the child hears its own prompt name

    asyncio.run(go())


def test_a_renamed_tool_over_http_carries_its_new_name_in_mcp_name() -> None:
    parent = rondo.Server("app")
    mount(parent, child_server(), namespace="w", rename={"forecast": "outlook"})
    seen: list[str] = []
    app = parent.asgi()

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen.extend(v.decode() for k, v in scope["headers"] if k == b"mcp-name")
        await app(scope, receive, send)

    with served(recording) as (url, _):

        async def go() -> None:
            async with Client(url, on_elicit=oslo) as client:
                assert (await client.call_tool("w_outlook")).text == "sunny in Oslo"

        asyncio.run(go())
    assert seen and set(seen) == {"w_outlook"}  # both rounds named it the new way


def test_refused_transforms() -> None:
    parent = rondo.Server("app")
    with pytest.raises(ValueError, match="rename= gives two components the same name"):
        mount(parent, child_server(), namespace="a", rename={"forecast": "x", "alerts": "x"})
    with pytest.raises(ValueError, match="rename= gives 'bad name', which is not a tool name"):
        mount(parent, child_server(), namespace="b", rename={"forecast": "bad name"})
    with pytest.raises(TypeError, match="hide= is a collection of strings"):
        mount(parent, child_server(), namespace="c", hide="debug")
    with pytest.raises(TypeError, match="visible= is a callable"):
        mount(parent, child_server(), namespace="d", visible=True)  # type: ignore[arg-type]


@pytest.mark.parametrize("protocol", ERAS)
def test_visibility_per_principal(protocol: str) -> None:
    parent = rondo.Server("app")

    def visible(who: Any, kind: str, name: str) -> bool:
        admin_only = {("tool", "purge"), ("resource", "weather://secret")}
        return (kind, name) not in admin_only or (who is not None and "admin" in who.scopes)

    mount(parent, child_server(), namespace="w", visible=visible)
    admin = principal("ada", scopes=["admin"])
    user = principal("bob")

    async def go() -> None:
        async with Client(parent, protocol=protocol, auth=admin) as client:
            assert "w_purge" in [t.name for t in await client.list_tools()]
            assert (await client.call_tool("w_purge")).text == "purged"
            assert "weather://secret" in [r.uri for r in await client.list_resources()]
            assert (await client.read_resource("weather://secret")).text == "hidden"
        for who in (user, None):
            async with Client(parent, protocol=protocol, auth=who) as client:
                names = [t.name for t in await client.list_tools()]
                assert "w_purge" not in names and "w_debug" in names
                with pytest.raises(rondo.McpError, match="^Unknown tool: w_purge$") as caught:
                    await client.call_tool("w_purge")
                assert caught.value.code == -32602
                assert "weather://secret" not in [r.uri for r in await client.list_resources()]
                with pytest.raises(rondo.McpError, match="^Resource not found$") as caught:
                    await client.read_resource("weather://secret")
                # as the core answers a URI it does not serve, in each era
                assert caught.value.code == (-32002 if protocol == "2025-11-25" else -32602)
                assert caught.value.data == {"uri": "weather://secret"}

    asyncio.run(go())


def test_transforms_on_a_proxied_upstream_from_an_mcp_json() -> None:
    up = rondo.Server("math")

    @up.tool(meta={"_fastmcp": {"tags": ["math"]}})  # as a FastMCP upstream tags its tools
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    @up.tool(meta={"_fastmcp": {"tags": ["math"]}})
    def sub(a: int, b: int) -> int:
        """Subtract."""
        return a - b

    @up.tool
    def shutdown() -> str:
        """Untagged: kept out."""
        return "down"

    with served(up.asgi()) as (url, _):
        front = from_mcp_json({"mcpServers": {"m": {"url": url}}}, transforms={
            "m": {"rename": {"add": "plus"}, "hide": ["sub"], "tags": ["math"],
                  "describe": {"add": "Adds, upstream."}}})

        async def go() -> None:
            async with front.started(), Client(front) as client:
                tools = {t.name: t.description for t in await client.list_tools()}
                assert tools == {"m_plus": "Adds, upstream."}
                # The proxy registered the upstream's FastMCP tags as the component's own.
                assert front.tools["m_plus"].tags == frozenset({"math"})
                # The relay still calls the upstream's own name.
                assert (await client.call_tool("m_plus", {"a": 2, "b": 5})).text == "7"

        asyncio.run(go())
    with pytest.raises(rondo.client.ConfigError, match="transforms= names 'x'"):
        from_mcp_json({"mcpServers": {"m": {"url": "http://h"}}}, transforms={"x": {}})


def test_tags_carry_through_a_nested_mount_and_never_reach_the_wire() -> None:
    middle, top = rondo.Server("middle"), rondo.Server("top")
    mount(middle, child_server(), namespace="w")
    # The parent's copy keeps the child's tags, so a mount of the parent filters on them too.
    assert middle.tools["w_alerts"].tags == frozenset({"public", "read"})
    mount(top, middle, namespace="m", tags={"read"})
    assert set(top.tools) == {"m_w_alerts"}

    async def go() -> None:
        async with Client(top) as client:
            listed = await client.list_tools()
            assert [t.name for t in listed] == ["m_w_alerts"]
            assert listed[0].meta is None  # tags are server-side labels, not sent

    asyncio.run(go())


def test_the_deprecated_tags_decorator_still_filters_and_warns() -> None:
    child = rondo.Server("old")
    with pytest.warns(DeprecationWarning, match="pass tags= to the server's decorator"):
        @child.tool(tags={"own"})
        @tags("legacy")
        def both() -> str:
            """Both kinds of tag."""
            return "b"

    @child.tool
    def neither() -> str:
        """No tags."""
        return "n"

    for wanted in ({"legacy"}, {"own"}):
        parent = rondo.Server("p")
        mount(parent, child, namespace="o", tags=wanted)
        assert set(parent.tools) == {"o_both"}
        assert parent.tools["o_both"].tags == frozenset({"own", "legacy"})


@pytest.mark.parametrize("protocol", ERAS)
def test_visibility_covers_completion_refs(protocol: str) -> None:
    parent = rondo.Server("app")

    def visible(who: Any, kind: str, name: str) -> bool:
        admin_only = {("prompt", "report"), ("resource", "weather://secret")}
        return (kind, name) not in admin_only or (who is not None and "admin" in who.scopes)

    mount(parent, child_server(), namespace="w", visible=visible)
    secret = {"type": "ref/resource", "uri": "weather://secret"}

    async def go() -> None:
        async with Client(parent, protocol=protocol,
                          auth=principal("ada", scopes=["admin"])) as admin:
            assert (await admin.complete({"type": "ref/prompt", "name": "w_report"}, "city",
                                         "Os")).values == ["report:Os"]
            # routed to the child (its hook answers `<ref name>:<value>`; a resource has none)
            assert (await admin.complete(secret, "x", "v")).values == ["None:v"]
        for who in (principal("bob"), None):
            async with Client(parent, protocol=protocol, auth=who) as user:
                for name in ("w_report", "w_nope"):  # hidden and unknown answer alike
                    with pytest.raises(rondo.McpError, match=f"^Unknown prompt: {name}$") as caught:
                        await user.complete({"type": "ref/prompt", "name": name}, "city", "Os")
                    assert caught.value.code == -32602
                # a hidden URI is answered as one no mount serves: the parent has no hook
                assert (await user.complete(secret, "x", "v")).values == []
                assert (await user.complete({"type": "ref/resource", "uri": "weather://nope"},
                                            "x", "v")).values == []
                # what the caller may see still completes
                assert (await user.complete({"type": "ref/resource", "uri": "weather://today"},
                                            "x", "v")).values == ["None:v"]

    asyncio.run(go())


def admins_see_the_city_and_the_secret() -> rondo.Server:
    """A parent with `child_server()` mounted under "w", plus a `weather://city/{name}`
    template; `weather://secret` and the template are visible to admins only."""
    parent, child = rondo.Server("app"), child_server()

    @child.resource("weather://city/{name}", mime_type="text/plain")
    def city(name: str) -> str:
        """A city's weather: admins only."""
        return name

    def visible(who: Any, kind: str, name: str) -> bool:
        hidden = {"weather://secret", "weather://city/{name}"}
        return name not in hidden or (who is not None and "admin" in who.scopes)

    mount(parent, child, namespace="w", visible=visible)
    return parent


def test_visibility_covers_legacy_resource_subscriptions() -> None:
    parent = admins_see_the_city_and_the_secret()
    got: dict[str, list[str]] = {"ada": [], "bob": []}

    async def go() -> None:
        ada = Client(parent, protocol="2025-11-25", auth=principal("ada", scopes=["admin"]),
                     on_notification=lambda m: got["ada"].append(m["params"]["uri"])
                     if m["method"] == "notifications/resources/updated" else None)
        bob = Client(parent, protocol="2025-11-25", auth=principal("bob"),
                     on_notification=lambda m: got["bob"].append(m["params"]["uri"])
                     if m["method"] == "notifications/resources/updated" else None)
        async with ada, bob:
            for client in (ada, bob):
                for uri in ("weather://secret", "weather://city/oslo", "weather://today"):
                    # a hidden URI is accepted as an unserved one is: `{}`, nothing recorded
                    assert await client.request("resources/subscribe", {"uri": uri}) == {}
            parent.notify_resource_updated("weather://secret")
            parent.notify_resource_updated("weather://city/oslo")
            parent.notify_resource_updated("weather://today")
            await until(lambda: len(got["ada"]) >= 3 and len(got["bob"]) >= 1, 5,
                        "ada heard fewer than three updates, or bob none")
            # bob's "today" came after "secret" was sent: had it been recorded, it would be here
            assert got == {"ada": ["weather://secret", "weather://city/oslo", "weather://today"],
                           "bob": ["weather://today"]}

    asyncio.run(go())


def test_visibility_covers_listen_streams_at_delivery() -> None:
    parent = admins_see_the_city_and_the_secret()
    sent = ["weather://secret", "weather://city/oslo", "weather://today"]

    async def updates(who: Any, expected: int) -> list[str]:
        async with Client(parent, auth=who) as client, \
                client.listen(resource_uris=["weather://", "weather://secret"]) as sub:
            for uri in sent:  # a prefix, an exact hidden URI, a hidden template's URI
                parent.notify_resource_updated(uri)
            got = []
            while len(got) < expected:
                note = await asyncio.wait_for(sub.__anext__(), 5)
                got.append(note["params"]["uri"])
            return got

    async def go() -> None:
        # the admin hears all three; "today" is sent last, so bob's one note proves the others
        # were dropped, not late
        assert await updates(principal("ada", scopes=["admin"]), 3) == sent
        assert await updates(principal("bob"), 1) == ["weather://today"]

    asyncio.run(go())


def _updates_heard(got: list[str], era: str) -> Any:
    from tests.helpers.wire_schema import validate

    def note(message: Any) -> None:
        if message.get("method") == "notifications/resources/updated":
            validate({"jsonrpc": "2.0", **message}, era=era)
            got.append(message["params"]["uri"])
    return note


def test_visibility_covers_a_legacy_prefix_subscription_above_a_hidden_uri() -> None:
    """A 2025-11-25 subscription to `weather://` covers `weather://secret`: the session's
    fan-out drops the hidden URI's updates for a caller `visible=` hides it from, as a
    2026-07-28 listen stream does."""
    parent = admins_see_the_city_and_the_secret()
    got: dict[str, list[str]] = {"ada": [], "bob": []}
    sent = ["weather://secret", "weather://city/oslo", "weather://today"]

    async def go() -> None:
        ada = Client(parent, protocol="2025-11-25", auth=principal("ada", scopes=["admin"]),
                     on_notification=_updates_heard(got["ada"], "2025-11-25"))
        bob = Client(parent, protocol="2025-11-25", auth=principal("bob"),
                     on_notification=_updates_heard(got["bob"], "2025-11-25"))
        async with ada, bob:
            for client in (ada, bob):
                assert await client.request("resources/subscribe", {"uri": "weather://"}) == {}
            for uri in sent:
                parent.notify_resource_updated(uri)
            await until(lambda: len(got["ada"]) >= 3 and len(got["bob"]) >= 1, 5,
                        "ada heard fewer than three updates, or bob none")
            # "today" is sent last: bob's one note proves the others were dropped, not late
            assert got == {"ada": sent, "bob": ["weather://today"]}

    asyncio.run(go())


@pytest.mark.parametrize("protocol", ERAS)
def test_a_uri_hide_leaves_out_sends_no_updates_to_a_prefix_subscriber(protocol: str) -> None:
    """`hide=` leaves `weather://secret` out of the parent: the child's updates for it are
    not the parent's, so a subscription to the prefix above it never hears them."""
    parent, child = rondo.Server("app"), child_server()
    mount(parent, child, namespace="w", hide=["weather://secret"])
    got: list[str] = []

    async def go() -> None:
        async with Client(parent, protocol=protocol,
                          on_notification=_updates_heard(got, protocol)) as client:
            if protocol == "2025-11-25":
                assert await client.request("resources/subscribe", {"uri": "weather://"}) == {}
                child.notify_resource_updated("weather://secret")
                child.notify_resource_updated("weather://today")
                await until(lambda: got, 5, "no update heard")
            else:
                async with client.listen(resource_uris=["weather://"]) as sub:
                    child.notify_resource_updated("weather://secret")
                    child.notify_resource_updated("weather://today")
                    note = await asyncio.wait_for(sub.__anext__(), 5)
                    got.clear()
                    got.append(note["params"]["uri"])
            assert got == ["weather://today"]  # sent last: the hidden one was dropped

    asyncio.run(go())
