"""proxy(upstream_auth=...): each caller's own credentials go upstream, so a list the upstream
marks private is listed per principal (gateway/percaller.py), not once with the proxy's own."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

import rondo
from rondo.auth import InvalidToken, Principal, ResourceServer
from rondo.auth.principal import CALLER
from rondo.client import Client
from rondo.gateway.percaller import PerCaller
from rondo.testing import principal
from tests.helpers.gateway_upstream import Recorder, served
from tests.helpers.wire_schema import validate

ERAS = ["2025-11-25", "2026-07-28"]
ISSUER = "https://issuer.test"
SCOPES = {"tok-alice": "mcp:use files:write", "tok-bob": "mcp:use", "tok-proxy": "mcp:use"}


class Tokens:
    """The upstream's verifier: `tok-<name>` is <name> with the scopes above."""

    cache_ttl = 0.0

    async def verify(self, token: str) -> Principal:
        if token not in SCOPES:
            raise InvalidToken("The access token is invalid", reason="test")
        return Principal.from_claims({"sub": token[4:], "iss": ISSUER, "scope": SCOPES[token],
                                      "exp": time.time() + 600})


class AsCaller(httpx.Auth):
    """upstream_auth: the caller's own token (`tok-<subject>`), the proxy's without a caller
    (a stand-in for `TokenExchange.upstream_auth`)."""

    def auth_flow(self, request: httpx.Request) -> Any:
        who = CALLER.get()
        request.headers["Authorization"] = f"Bearer tok-{who.subject if who else 'proxy'}"
        yield request


def guarded_upstream() -> rondo.Server:
    up = rondo.Server("guarded", auth=ResourceServer(
        resource="http://127.0.0.1/mcp", issuer=ISSUER, verifier=Tokens(),
        scopes_supported=["mcp:use", "files:write"]), list_ttl_ms=60_000)

    @up.tool
    def whoami(ctx: rondo.Context) -> str:
        """Anyone."""
        return ctx.auth.subject

    @up.tool(scopes=["files:write"])
    def write(path: str) -> str:
        """Writers only."""
        return f"wrote {path}"

    return up


@pytest.fixture
def upstream() -> Iterator[tuple[str, Recorder]]:
    recorder = Recorder(guarded_upstream().asgi())
    with served(recorder) as (url, _):
        yield url, recorder


def _listed(recorder: Recorder, who: str) -> int:
    return sum(1 for post in recorder.posts if post.get("mcp-method") == "tools/list"
               and post.get("authorization") == f"Bearer tok-{who}")


@pytest.mark.parametrize("protocol", ERAS)
def test_a_private_upstream_list_is_listed_per_principal(
        upstream: tuple[str, Recorder], protocol: str) -> None:
    url, recorder = upstream
    front = rondo.proxy(url, upstream_protocol="2026-07-28", upstream_auth=AsCaller())
    alice, bob = principal("alice"), principal("bob")

    async def names(who: Any) -> list[str]:
        async with Client(front, protocol=protocol, auth=who) as client:
            listed = await client.request("tools/list", {})
            validate({"jsonrpc": "2.0", "id": 1, "result": listed}, era=protocol,
                     method="tools/list")
            if protocol == "2026-07-28":
                assert listed["cacheScope"] == "private"
            return sorted(tool["name"] for tool in listed["tools"])

    async def go() -> None:
        async with front.started():
            # The proxy's own listing (its own token) holds only what anyone may use.
            assert await names(None) == ["whoami"]
            assert await names(alice) == ["whoami", "write"]  # alice's own upstream listing
            assert await names(bob) == ["whoami"]
            assert await names(None) == ["whoami"]  # alice's entry is not anyone's
            before = _listed(recorder, "alice")
            assert await names(alice) == ["whoami", "write"]
            assert _listed(recorder, "alice") == before  # kept for the upstream's ttlMs
            async with Client(front, protocol=protocol, auth=alice) as client:
                assert (await client.call_tool("write", {"path": "/a"})).text == "wrote /a"
            async with Client(front, protocol=protocol, auth=bob) as client:
                # registered for alice, called for bob: the upstream checks bob's own token
                with pytest.raises(rondo.McpError, match="insufficient scope"):
                    await client.call_tool("write", {"path": "/b"})

    asyncio.run(go())
    assert _listed(recorder, "alice") == 1 and _listed(recorder, "bob") == 1


def test_the_per_principal_lists_are_bounded_least_recently_used_first() -> None:
    clock = [0.0]

    class Link:
        def __init__(self) -> None:
            self.client = self
            self.listed: list[str] = []

        async def request(self, method: str, params: Any) -> dict[str, Any]:
            who = CALLER.get()
            assert who is not None
            self.listed.append(str(who.subject))
            return {"tools": [{"name": f"t-{who.subject}"}], "ttlMs": 1000}

    link = Link()
    per = PerCaller(link, lambda method, entries: [], clock=lambda: clock[0],  # type: ignore[arg-type]
                    limit=2)
    server = rondo.Server("s")

    class Req:
        method = "tools/list"
        params: dict[str, Any] = {}
        auth = None

    async def go() -> None:
        for who in ("a", "b", "a", "c", "a", "b"):
            await per.answer(server.core, Req(), principal(who))  # type: ignore[arg-type]
        # a, b listed; a kept; c evicts b (least recently used); a kept; b listed again
        assert link.listed == ["a", "b", "c", "b"]
        assert len(per.kept) == 2
        clock[0] = 2.0  # past the upstream's ttlMs: listed again
        await per.answer(server.core, Req(), principal("b"))  # type: ignore[arg-type]
        assert link.listed[-1] == "b" and len(link.listed) == 5

    asyncio.run(go())


def test_at_most_max_adopted_entries_a_list_are_registered() -> None:
    """docs/gateway.md: an entry only some callers see is registered, at most 1,024 a list,
    however many principals list how many entries."""
    from rondo.gateway.percaller import MAX_ADOPTED

    class Link:
        def __init__(self) -> None:
            self.client = self

        async def request(self, method: str, params: Any) -> dict[str, Any]:
            who = CALLER.get()
            assert who is not None
            return {"tools": [{"name": f"{who.subject}-{n}"} for n in range(700)]}

    offered: list[str] = []

    def adopt(method: str, entries: list[dict[str, Any]]) -> list[str]:
        names = [entry["name"] for entry in entries]
        offered.extend(names)
        return names

    per = PerCaller(Link(), adopt)  # type: ignore[arg-type]
    server = rondo.Server("s")

    class Req:
        method = "tools/list"
        params: dict[str, Any] = {}
        auth = None

    async def go() -> None:
        for who in ("a", "b", "c"):
            await per.answer(server.core, Req(), principal(who))  # type: ignore[arg-type]

    asyncio.run(go())
    assert MAX_ADOPTED == 1024 and len(per.adopted["tools/list"]) == MAX_ADOPTED
    assert offered == [f"a-{n}" for n in range(700)] + [f"b-{n}" for n in range(324)]


class _Req:
    method = "tools/list"
    params: dict[str, Any] = {}
    auth = None


def test_one_principals_listing_keeps_at_most_max_entries_names_and_max_chars() -> None:
    """docs/gateway.md: a principal's listing keeps at most 10,000 names and 1 MiB of them;
    the pages past the bound are not read (before: 64 pages of 1,000 read and all kept)."""
    from rondo.gateway.percaller import MAX_CHARS, MAX_ENTRIES

    class Link:
        def __init__(self, size: int) -> None:
            self.client = self
            self.pages = 0
            self.size = size

        async def request(self, method: str, params: Any) -> dict[str, Any]:
            self.pages += 1
            n = self.pages
            return {"tools": [{"name": f"{n}-{i}-".ljust(self.size, "x"), "description": "d" * 100}
                              for i in range(1000)], "nextCursor": f"c{n}", "ttlMs": 60_000}

    async def go(size: int) -> tuple[Link, list[Any]]:
        link = Link(size)
        per = PerCaller(link, lambda method, entries: [])  # type: ignore[arg-type]
        await per.answer(rondo.Server("s").core, _Req(), principal("a"))  # type: ignore[arg-type]
        (kept,) = per.kept.values()
        return link, kept[1]

    link, names = asyncio.run(go(10))
    assert MAX_ENTRIES == 10_000 and len(names) == MAX_ENTRIES and link.pages == 10
    assert all(type(name) is str for name in names)  # the names, not the upstream's entries
    assert names[0] == "1-0-".ljust(10, "x") and names[-1] == "10-999-".ljust(10, "x")
    link, names = asyncio.run(go(2000))  # 1,000 names of 2,000 characters a page
    assert MAX_CHARS == 1 << 20 and sum(map(len, names)) <= MAX_CHARS
    assert len(names) == MAX_CHARS // 2000 and link.pages == 1


def test_a_slow_listing_for_one_principal_does_not_hold_up_anothers() -> None:
    """One listing in flight per principal and list: the same principal's second request
    waits for it (one upstream listing), another principal's is listed meanwhile (before:
    one lock per list method, so bob waited for alice's slow upstream)."""
    class Link:
        def __init__(self) -> None:
            self.client = self
            self.listed: list[str] = []
            self.gate: asyncio.Event | None = None

        async def request(self, method: str, params: Any) -> dict[str, Any]:
            who = CALLER.get()
            assert who is not None and self.gate is not None
            self.listed.append(str(who.subject))
            if who.subject == "slow":
                await self.gate.wait()
            return {"tools": [{"name": f"t-{who.subject}"}], "ttlMs": 60_000}

    link = Link()
    per = PerCaller(link, lambda method, entries: [])  # type: ignore[arg-type]
    core = rondo.Server("s").core

    async def go() -> None:
        link.gate = asyncio.Event()  # made in the test's loop
        slow = [asyncio.create_task(per.answer(core, _Req(), principal("slow")))  # type: ignore[arg-type]
                for _ in range(2)]
        deadline = time.monotonic() + 5
        while link.listed != ["slow"]:
            assert time.monotonic() < deadline, link.listed
            await asyncio.sleep(0.001)
        fast = await asyncio.wait_for(per.answer(core, _Req(), principal("fast")), 5)  # type: ignore[arg-type]
        assert fast["tools"] == [] and link.listed == ["slow", "fast"]
        assert not any(task.done() for task in slow)
        assert set(per.locks) == {("tools/list", per_key("slow"))}  # only the one in flight
        link.gate.set()
        await asyncio.gather(*slow)
        assert link.listed == ["slow", "fast"]  # slow's second request waited for its first
        assert per.locks == {}  # nothing kept once no request holds a lock

    def per_key(who: str) -> str:
        from rondo.gateway.percaller import principal_key
        return principal_key(principal(who))

    asyncio.run(go())
