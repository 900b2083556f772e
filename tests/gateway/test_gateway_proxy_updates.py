"""rondo.proxy relays the upstream's `notifications/resources/updated` to its subscribers: a
downstream subscription subscribes upstream, on every pair of upstream and downstream eras,
with a real upstream on loopback HTTP."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from typing import Any

import pytest

import rondo
from rondo.client import Client
from tests.helpers.gateway_upstream import Recorder, served
from tests.helpers.polling import until
from tests.helpers.subscribing import Heard, pumping, subscribed, touch_until_heard

ERAS = ["2025-11-25", "2026-07-28"]


def notes_upstream() -> rondo.Server:
    up = rondo.Server("notes")

    @up.resource("note://a")
    def a() -> str:
        return "a"

    @up.resource("note://b")
    def b() -> str:
        return "b"

    @up.tool()
    def touch(uri: str) -> str:
        up.notify_resource_updated(uri)
        return "touched"

    return up


@pytest.mark.parametrize("downstream", ERAS)
@pytest.mark.parametrize("upstream_era", ERAS)
def test_an_upstream_update_reaches_the_proxys_subscriber(upstream_era: str,
                                                          downstream: str) -> None:
    recorder = Recorder(notes_upstream().asgi())
    with served(recorder) as (url, _):
        front = rondo.proxy(url, upstream_protocol=upstream_era, timeout=10.0)

        async def go() -> None:
            async with front.started(), \
                    subscribed(front, downstream, "note://a") as (client, heard):
                await updates(client, heard)

        asyncio.run(go())


async def updates(client: Client, heard: Heard) -> None:
    async def touch() -> None:
        assert (await client.call_tool("touch", {"uri": "note://a"})).text == "touched"

    # The upstream subscription may settle just after the downstream one (a modern upstream's
    # listen stream is reopened with the URI): touch until the update arrives, within a bound.
    got = await touch_until_heard(heard, touch)
    assert got["method"] == "notifications/resources/updated"
    assert got["params"]["uri"] == "note://a"
    # An update of a URI nobody subscribed to is not passed on.
    while not heard.empty():
        heard.get_nowait()
    assert (await client.call_tool("touch", {"uri": "note://b"})).text == "touched"
    assert (await client.call_tool("touch", {"uri": "note://a"})).text == "touched"
    got = await asyncio.wait_for(heard.get(), 10)
    assert got["params"]["uri"] == "note://a"  # b's came first upstream, and was not relayed


class Bodies:
    """ASGI wrapper: the JSON-RPC method and params of every POST, and a hook called with each
    before the app sees it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self.before: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[Any] = []
        body = b""
        while True:
            message = await receive()
            chunks.append(message)
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        import json

        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("method"), str):
            params = parsed.get("params") if isinstance(parsed.get("params"), dict) else {}
            self.seen.append((parsed["method"], params))
            if self.before is not None:
                self.before(parsed["method"], params)
        replay = iter(chunks)

        async def again() -> Any:
            try:
                return next(replay)
            except StopIteration:
                return await receive()

        await self.app(scope, again, send)

    def listens(self) -> list[list[str]]:
        """The resource URIs of each `subscriptions/listen` the upstream got, in order."""
        return [list((params.get("notifications") or {}).get("resourceSubscriptions") or [])
                for method, params in self.seen if method == "subscriptions/listen"]

    def unsubscribed(self) -> list[str]:
        return [params.get("uri") for method, params in self.seen
                if method == "resources/unsubscribe"]

    def left(self, uri: str, era: str) -> bool:
        """Whether the upstream was told `uri` is no longer wanted: `resources/unsubscribe` of
        it alone (2025-11-25), or a latest listen stream without it (2026-07-28)."""
        if era == "2025-11-25":
            return self.unsubscribed() == [uri]
        listens = self.listens()
        return bool(listens) and uri not in listens[-1]


@pytest.mark.parametrize("downstream", ERAS)
@pytest.mark.parametrize("upstream_era", ERAS)
def test_the_upstream_subscription_ends_with_its_last_downstream_subscriber(
        upstream_era: str, downstream: str) -> None:
    """Two downstream subscribers of one URI: the first leaving keeps the upstream subscribed
    (the second still hears updates); the last leaving unsubscribes upstream
    (`resources/unsubscribe` to a 2025-11-25 upstream, a listen stream without the URI to a
    2026-07-28 one)."""
    from tests.helpers.wire_schema import validate

    bodies = Bodies(notes_upstream().asgi())
    with served(bodies) as (url, _):
        front = rondo.proxy(url, upstream_protocol=upstream_era, timeout=10.0)

        def gone() -> bool:
            return bodies.left("note://a", upstream_era)

        async def subscribe(client: Client, heard: asyncio.Queue[Any]) -> Any:
            """Subscribe `client` to note://a; the handle that ends it."""
            if downstream == "2025-11-25":
                assert await client.request("resources/subscribe", {"uri": "note://a"}) == {}

                async def end_legacy() -> None:
                    assert await client.request("resources/unsubscribe",
                                                {"uri": "note://a"}) == {}
                return end_legacy
            held = AsyncExitStack()  # leaves the pump, then the stream
            sub = await held.enter_async_context(client.listen(resource_uris=["note://a"]))
            await held.enter_async_context(pumping(sub, heard))
            return held.aclose

        async def go() -> None:
            first_heard: asyncio.Queue[Any] = asyncio.Queue()
            second_heard: asyncio.Queue[Any] = asyncio.Queue()

            def noted(queue: asyncio.Queue[Any]) -> Any:
                def note(message: Any) -> None:
                    if message.get("method") == "notifications/resources/updated":
                        validate({"jsonrpc": "2.0", **message}, era=downstream)
                        if downstream == "2025-11-25":
                            queue.put_nowait(message)
                return note

            async with front.started(), \
                    Client(front, protocol=downstream,
                           on_notification=noted(first_heard)) as first, \
                    Client(front, protocol=downstream,
                           on_notification=noted(second_heard)) as second:
                end_first = await subscribe(first, first_heard)
                end_second = await subscribe(second, second_heard)
                await updates(second, second_heard)  # both subscribed, upstream too
                await end_first()
                while not second_heard.empty():
                    second_heard.get_nowait()
                assert (await second.call_tool("touch", {"uri": "note://a"})).text == "touched"
                got = await asyncio.wait_for(second_heard.get(), 10)
                assert got["params"]["uri"] == "note://a"  # still subscribed upstream
                assert not gone()
                await end_second()
                await until(gone, 10, f"never unsubscribed upstream: {bodies.seen[-3:]}")

        asyncio.run(go())


def test_an_update_sent_while_the_upstream_stream_is_reopened_is_not_missed() -> None:
    """A 2026-07-28 upstream: a second downstream URI makes the proxy open its listen stream
    again. An update of the first URI sent at the moment the new stream's request reaches the
    upstream arrives: the old stream is closed only once the new one is acknowledged."""
    up = notes_upstream()
    bodies = Bodies(up.asgi())
    with served(bodies) as (url, _):
        front = rondo.proxy(url, upstream_protocol="2026-07-28", timeout=10.0)

        fired: list[list[str]] = []

        def at_reopen(method: str, params: dict[str, Any]) -> None:
            wanted = (params.get("notifications") or {}).get("resourceSubscriptions") or []
            if method == "subscriptions/listen" and "note://b" in wanted:
                fired.append(list(wanted))
                up.notify_resource_updated("note://a")  # before the new stream exists

        async def go() -> None:
            async with front.started(), Client(front) as client, \
                    client.listen(resource_uris=["note://a"]) as sub:
                heard: Heard = asyncio.Queue()
                async with pumping(sub, heard):
                    await updates(client, heard)  # note://a is followed upstream
                    while not heard.empty():
                        heard.get_nowait()
                    bodies.before = at_reopen
                    async with client.listen(resource_uris=["note://b"]):
                        # bound generous for a loaded machine; the update is sent once only
                        try:
                            got = await asyncio.wait_for(heard.get(), 30)
                        except TimeoutError:
                            raise AssertionError(f"missed; hook fired for {fired}, upstream "
                                                 f"listens {bodies.listens()}") from None
                        assert got["params"]["uri"] == "note://a"

        asyncio.run(go())


@pytest.mark.parametrize("upstream_era", ERAS)
def test_a_closed_legacy_session_releases_its_upstream_subscriptions(upstream_era: str) -> None:
    bodies = Bodies(notes_upstream().asgi())
    with served(bodies) as (url, _):
        front = rondo.proxy(url, upstream_protocol=upstream_era, timeout=10.0)

        def gone() -> bool:
            return bodies.left("note://a", upstream_era)

        async def go() -> None:
            async with front.started():
                async with Client(front, protocol="2025-11-25") as client:
                    assert await client.request("resources/subscribe", {"uri": "note://a"}) == {}
                    await until(lambda: any("note://a" in uris for uris in bodies.listens())
                                or ("resources/subscribe", {"uri": "note://a"}) in bodies.seen,
                                10, "never subscribed upstream")
                    assert not gone()
                await until(gone, 10, "a closed session kept its upstream subscription")

        asyncio.run(go())


class FakeLink:
    """What ResourceWatch uses of an upstream link: the URIs it watches upstream."""

    identity = label = "fake"
    client = None
    rewatch = None

    def __init__(self) -> None:
        self.watched: set[str] = set()

    async def watch(self, uri: str) -> None:
        self.watched.add(uri)


def test_at_most_max_watched_uris_are_held_per_upstream() -> None:
    """docs/gateway.md: at most 1024 URIs per upstream; one more is not subscribed upstream
    (nor held), a URI already held takes another holder."""
    from rondo.gateway.updates import MAX_WATCHED, ResourceWatch

    link = FakeLink()
    watch = ResourceWatch(link)  # type: ignore[arg-type]

    async def go() -> None:
        for n in range(MAX_WATCHED + 1):
            await watch.hold(f"note://{n}", "a")
        await watch.hold("note://0", "b")

    asyncio.run(go())
    assert MAX_WATCHED == 1024 and len(watch.holders) == len(link.watched) == MAX_WATCHED
    assert f"note://{MAX_WATCHED}" not in link.watched and watch.holders["note://0"] == {"a", "b"}


def test_a_session_that_subscribes_again_and_again_is_chained_once() -> None:
    """A 2025-11-25 session that subscribes, unsubscribes and subscribes again has its
    on_close chained once, not once a cycle (the chain grew without bound and, a thousand
    cycles on, closing the session overflowed the stack); closing it still unsubscribes."""
    from types import SimpleNamespace

    from rondo.gateway.updates import ResourceWatch

    class Session:
        on_close: Any = None

    link, session = FakeLink(), Session()
    watch = ResourceWatch(link)  # type: ignore[arg-type]

    async def call_next(core: Any, req: Any) -> dict[str, Any]:
        return {}

    def req(uri: str) -> Any:
        return SimpleNamespace(params={"uri": uri}, call=SimpleNamespace(session=session))

    async def go() -> None:
        await watch._subscribe(None, req("note://a"), call_next)  # type: ignore[arg-type]
        chained = session.on_close
        assert callable(chained) and link.watched == {"note://a"}
        for _ in range(1500):
            await watch._unsubscribe(None, req("note://a"), call_next)  # type: ignore[arg-type]
            await watch._subscribe(None, req("note://a"), call_next)  # type: ignore[arg-type]
        assert session.on_close is chained
        session.on_close(session)
        deadline = asyncio.get_running_loop().time() + 5
        while watch.holders or link.watched:
            assert asyncio.get_running_loop().time() < deadline, watch.holders
            await asyncio.sleep(0.01)

    asyncio.run(go())
