"""A repeated POST header block is judged once (transport/verdicts.py), with the same answers.

The reference is a fresh app for every request, whose memo is always empty: one long-lived app
that has seen many blocks (most of them several times) must answer every request with the same
status and the same bytes. Then the bounds: credentials and large blocks are never kept, the
memo never holds more than its cap, and unhashable header pairs are judged every time. A block
carrying credentials is remembered without them: behind an authorization guard every request is
still judged by its own token, and no token is kept.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rondo
from rondo.transport.http import HttpApp, verdicts
from tests.core.test_express import CAPS, PV, SERVER, V, asgi, request

LONG_LIVED = HttpApp(SERVER, max_body=600)

values = {
    b"host": [b"127.0.0.1:8000", b"localhost", b"evil.example"],
    b"content-type": [b"application/json", b"Application/JSON; charset=utf-8", b"text/plain"],
    b"accept": [b"application/json, text/event-stream", b"text/html", b"*/*"],
    b"origin": [b"http://localhost", b"http://evil.example"],
    b"mcp-method": [b"tools/call", b"tools/call ", b"tools/list"],
    b"mcp-name": [b"add", b" add", b"ADD", b"ask_color"],
    b"mcp-protocol-version": [V.encode(), b" " + V.encode(), b"2025-11-25", b""],
    b"mcp-session-id": [b"abc"],
    b"content-length": [b"12", b"bogus", b"100000"],
    b"authorization": [b"Bearer good-token", b"Bearer two", b"Basic eA=="],
    b"cookie": [b"s=1"],
    b"Authorization": [b"Bearer mixed-case"],
}
# Mostly the usual block (so the long-lived app meets it again and again), often a near miss.
usual = [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json"),
         (b"accept", b"application/json, text/event-stream"), (b"mcp-method", b"tools/call"),
         (b"mcp-name", b"add"), (b"mcp-protocol-version", V.encode())]
header = st.sampled_from(sorted(values)).flatmap(
    lambda name: st.sampled_from(values[name]).map(lambda value: (name, value)))
blocks = st.one_of(
    st.just(usual),
    st.tuples(st.integers(0, len(usual)), st.lists(header, max_size=2)).map(
        lambda cut: usual[:cut[0]] + cut[1] + usual[cut[0]:]),
    st.lists(header, max_size=8),
)
calls = st.one_of(
    st.just({"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {PV: V, CAPS: {}}}),
    st.just({"name": "ask_color", "arguments": {}, "_meta": {PV: V, CAPS: {}}}),
    st.just({"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {PV: "2025-11-25", CAPS: {}}}),
    st.just({"name": "ADD", "arguments": {}, "_meta": {PV: V, CAPS: {}}}),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks, calls, st.integers(1, 3))
def test_a_remembered_block_gets_the_answer_a_fresh_app_gives(
    block: list[tuple[bytes, bytes]], params: dict[str, Any], times: int
) -> None:
    body = msgspec.json.encode(request(params))
    fresh = asyncio.run(asgi(HttpApp(SERVER, max_body=600), body, block))
    for _ in range(times):
        assert asyncio.run(asgi(LONG_LIVED, body, list(block))) == fresh
    assert len(LONG_LIVED._verdicts) <= verdicts.MAX_BLOCKS


def guarded_server() -> rondo.Server:
    from rondo.auth import ResourceServer
    from tests.auth.test_auth_unit import ISSUER, RESOURCE, StubVerifier

    rs = ResourceServer(resource=RESOURCE, issuer=ISSUER, verifier=StubVerifier(),
                        scopes_supported=["mcp:use"], required_scopes=["mcp:use"])
    server = rondo.Server("guarded", "1.0.0", auth=rs, state=None, warn_undocumented=False)

    @server.tool
    def add(a: int, b: int) -> str:
        """Add."""
        return str(a + b)

    @server.tool(scopes=["files:write"])
    def ask_color(ctx: rondo.Context) -> str:
        """A tool alice's token does not reach."""
        return "no"

    return server


GUARDED_LONG_LIVED = HttpApp(guarded_server(), max_body=600)
# Mostly the usual block with one credential somewhere in it (good, bad, two of them, another
# case), else any block.
credential = st.sampled_from([(b"authorization", b"Bearer good-token"),
                              (b"authorization", b"Bearer two"), (b"cookie", b"s=1"),
                              (b"Authorization", b"Bearer good-token")])
with_credentials = st.tuples(st.integers(0, len(usual)),
                             st.lists(credential, min_size=1, max_size=2)).map(
    lambda cut: usual[:cut[0]] + cut[1] + usual[cut[0]:])
guarded_blocks = st.integers(0, 3).flatmap(lambda i: blocks if i == 0 else with_credentials)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(guarded_blocks, calls, st.integers(1, 3))
def test_behind_a_guard_a_remembered_block_gets_the_answer_a_fresh_app_gives(
    block: list[tuple[bytes, bytes]], params: dict[str, Any], times: int
) -> None:
    body = msgspec.json.encode(request(params))
    fresh = asyncio.run(asgi(HttpApp(guarded_server(), max_body=600), body, block))
    for _ in range(times):
        assert asyncio.run(asgi(GUARDED_LONG_LIVED, body, list(block))) == fresh
    kept = GUARDED_LONG_LIVED._verdicts._kept
    assert len(kept) <= verdicts.MAX_BLOCKS
    assert not any(name == b"authorization" for key in kept for name, _ in key)


def add_body() -> bytes:
    return msgspec.json.encode(request({"name": "add", "arguments": {"a": 1, "b": 2},
                                        "_meta": {PV: V, CAPS: {}}}))


def counted_maps(monkeypatch: Any) -> list[Any]:
    """Every header map the memo builds from now on (one per block judged)."""
    maps: list[Any] = []
    real = verdicts.header_map

    def counted(scope: dict[str, Any]) -> Any:
        maps.append(scope)
        return real(scope)

    monkeypatch.setattr(verdicts, "header_map", counted)
    return maps


def test_a_repeated_block_is_judged_once(monkeypatch: Any) -> None:
    maps = counted_maps(monkeypatch)
    app = HttpApp(SERVER)
    for _ in range(3):
        status, body = asyncio.run(asgi(app, add_body(), list(usual)))
        assert status == 200 and b'"text":"3"' in body
    assert len(maps) == 1 and len(app._verdicts) == 1


def test_credentials_are_never_kept_and_large_blocks_are_not_remembered() -> None:
    server = rondo.Server("verdicts", state=None)

    @server.tool
    def add(a: int, b: int) -> str:
        """Add."""
        return str(a + b)

    app = HttpApp(server)
    for extra in ([(b"authorization", b"Bearer secret-token")], [(b"cookie", b"s=secret-c")],
                  [(b"proxy-authorization", b"Basic secret-p")],
                  [(b"Cookie", b"s=secret-m")],  # not ASGI's lower case: not kept at all
                  [(b"x-padding", b"x" * verdicts.MAX_BLOCK_BYTES)]):
        status, _ = asyncio.run(asgi(app, add_body(), usual + extra))
        assert status == 200
    kept = app._verdicts._kept
    # The three lower-case credential blocks are one block once their credentials are gone.
    assert list(kept) == [tuple(usual)]
    assert not any(b"secret" in value for key in kept for _, value in key)
    assert not any(b"secret" in value for facts in kept.values()
                   for values in facts.headers.values() for value in values)


def test_behind_a_guard_each_request_is_judged_by_its_own_token(monkeypatch: Any) -> None:
    maps = counted_maps(monkeypatch)
    app = HttpApp(guarded_server())
    host = [(b"host", b"localhost")] + usual[1:]
    tokens = [b"good-token", b"bad-token", b"good-token", None, b"good-token", b"bad-token"]
    statuses = []
    for token in tokens:
        block = host if token is None else host + [(b"authorization", b"Bearer " + token)]
        status, body = asyncio.run(asgi(app, add_body(), block))
        statuses.append(status)
        if status == 200:
            assert b'"text":"3"' in body
    assert statuses == [200, 401, 200, 401, 200, 401]
    # The block was judged once, with and without a token alike; the tokens were not kept.
    assert len(maps) == 1 and list(app._verdicts._kept) == [tuple(host)]
    # Two headers of the same credential: both reach the guard, which refuses the pair.
    status, _ = asyncio.run(asgi(app, add_body(), host + [(b"authorization", b"Bearer good-token"),
                                                         (b"authorization", b"Bearer good-token")]))
    assert status == 400  # RFC 6750 §2: one credential per request; two are a malformed request


def test_the_memo_is_bounded_and_still_answers_past_its_cap() -> None:
    app = HttpApp(SERVER)
    for i in range(verdicts.MAX_BLOCKS * 2 + 3):
        status, _ = asyncio.run(asgi(app, add_body(), usual + [(b"x-request", str(i).encode())]))
        assert status == 200
        assert len(app._verdicts) <= verdicts.MAX_BLOCKS


def test_unhashable_header_pairs_are_judged_every_time() -> None:
    app = HttpApp(SERVER)
    as_lists: Any = [[name, value] for name, value in usual]
    for _ in range(2):
        status, body = asyncio.run(asgi(app, add_body(), as_lists))
        assert status == 200 and b'"text":"3"' in body
    assert len(app._verdicts) == 0
    bad_host: Any = [[b"host", b"evil.example"], *as_lists[1:]]
    status, _ = asyncio.run(asgi(app, add_body(), bad_host))
    assert status == 403
