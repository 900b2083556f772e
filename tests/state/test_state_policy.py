"""StatePolicy: configuration checks, seal_for/open_for/principal_of, and the server boundary."""

from __future__ import annotations

import asyncio
import logging
import re
import types
from typing import Any

import pytest

import rondo.state as state
from rondo.server.context import Context
from rondo.wire.errors import McpError

# The one answer every refused requestState gets, whatever the reason (logged, never sent).
REJECTED = f"^{re.escape(state.REJECTED_MESSAGE)}$"

KEY = [("k1", b"k" * 32)]
PARAMS = {"name": "book", "arguments": {"city": "Oslo"}}


def ctx_for(params=None, method="tools/call", auth=None, server="travel"):
    return Context(types.SimpleNamespace(name=server), request_method=method,
                   request_params=PARAMS if params is None else params, auth=auth)


def by_auth(ctx) -> str | None:
    return ctx.auth


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def test_defaults():
    policy = state.StatePolicy(keys=KEY)
    assert policy.ttl == 300 and not policy.encrypt and not policy.once
    assert isinstance(policy.replay_store, state.MemoryReplayStore)
    assert policy.principal_of(ctx_for(auth="alice")) is None  # anonymous by default


def test_principal_comes_from_the_callable():
    policy = state.StatePolicy(keys=KEY, principal=by_auth)
    assert policy.principal_of(ctx_for(auth="alice")) == "alice"
    token = policy.seal_for(ctx_for(auth="alice"), {"n": 1})
    assert policy.open_for(ctx_for(auth="alice"), token) == {"n": 1}
    with pytest.raises(McpError, match=REJECTED):
        policy.open_for(ctx_for(auth="mallory"), token)
    with pytest.raises(McpError, match=REJECTED):
        policy.open_for(ctx_for(auth=None), token)


def test_a_principal_callable_returning_junk_is_a_server_bug_not_invalid_state():
    policy = state.StatePolicy(keys=KEY, principal=lambda ctx: {"sub": "alice"})
    with pytest.raises(TypeError, match="principal must be a str or None"):
        policy.principal_of(ctx_for())
    with pytest.raises(TypeError, match=r"principal must be a str or None \(anonymous\), not dict"):
        policy.seal_for(ctx_for(), 1)
    with pytest.raises(TypeError, match=r"principal must be a str or None \(anonymous\), not dict"):
        policy.open_for(ctx_for(), "s1.k1.x.y")


@pytest.mark.parametrize(
    ("options", "error", "needle"),
    [
        ({"ttl": 901}, ValueError, "at most 900 seconds, got 901"),
        ({"ttl": 0}, ValueError, "at most 900 seconds, got 0"),
        ({"ttl": "300"}, TypeError, "ttl must be a number of seconds, not str"),
        ({"leeway": -1}, ValueError, "leeway must be 0 to 60 seconds, got -1"),
        ({"leeway": 61}, ValueError, "leeway must be 0 to 60 seconds, got 61"),
        ({"principal": "alice"}, TypeError, r"principal must be a callable taking the Context \(or None\)"),
        ({"encrypt": "yes"}, TypeError, "encrypt and once must be True or False"),
        ({"once": 1}, TypeError, "encrypt and once must be True or False"),
        ({"replay_store": object()}, TypeError, r"replay_store must have a consume\(token_id, ttl\) -> bool method"),
        ({"clock": 5}, TypeError, "clock must be a callable returning unix seconds"),
        ({"secret": b"k" * 32}, ValueError, "pass exactly one of secret="),  # together with keys=
        ({"keys": None, "secret": b"short"}, ValueError, "secret is 5 bytes"),
        ({"keys": [("a b", b"k" * 32)]}, ValueError, r"keys\[0\] id 'a b' must be 1 to 32 characters"),
    ],
)
def test_misconfiguration_raises_when_the_policy_is_built(options, error, needle):
    config: dict[str, Any] = {"keys": KEY, **options}
    with pytest.raises(error, match=needle):
        state.StatePolicy(**config)


def test_open_for_refuses_with_the_fixed_error_and_logs_the_reason(caplog):
    caplog.set_level(logging.DEBUG, logger="rondo.state")
    policy = state.StatePolicy(keys=KEY)
    token = policy.seal_for(ctx_for(), {"n": 1})
    with pytest.raises(McpError, match=REJECTED) as info:
        policy.open_for(ctx_for(method="prompts/get"), token)
    assert info.value.to_error() == {"code": -32602, "message": state.REJECTED_MESSAGE}
    (record,) = [r for r in caplog.records if r.name == "rondo.state"]
    assert record.levelno == logging.DEBUG
    assert "issued for method 'tools/call'" in record.getMessage()


def test_open_for_refuses_non_strings():
    policy = state.StatePolicy(keys=KEY)
    for value in (None, 3, {"d": 1}, ["x"]):
        with pytest.raises(McpError, match=REJECTED) as info:
            policy.open_for(ctx_for(), value)
        assert info.value.message == state.REJECTED_MESSAGE


def test_policy_ttl_and_clock():
    clock = Clock()
    policy = state.StatePolicy(keys=KEY, ttl=30, clock=clock)
    token = policy.seal_for(ctx_for(), 1)
    clock.now += 30 + policy.leeway
    assert policy.open_for(ctx_for(), token) == 1
    clock.now += 1
    with pytest.raises(McpError, match=REJECTED):
        policy.open_for(ctx_for(), token)


def test_seal_for_overrides():
    clock = Clock()
    policy = state.StatePolicy(keys=KEY, clock=clock)
    short = policy.seal_for(ctx_for(), 1, ttl=5)
    clock.now += 5 + policy.leeway + 1
    with pytest.raises(McpError, match=REJECTED):
        policy.open_for(ctx_for(), short)
    with pytest.raises(ValueError, match="ttl must be more than 0 and at most 900 seconds, got 1000"):
        policy.seal_for(ctx_for(), 1, ttl=1000)
    once = policy.seal_for(ctx_for(), 1, once=True)
    assert policy.open_for(ctx_for(), once) == 1
    with pytest.raises(McpError, match=REJECTED):
        policy.open_for(ctx_for(), once)


def test_policy_once_uses_its_store():
    seen: list[tuple[str, float]] = []

    class Recording:
        def consume(self, token_id: str, ttl: float) -> bool:
            seen.append((token_id, ttl))
            return len(seen) == 1

    policy = state.StatePolicy(keys=KEY, once=True, replay_store=Recording(), ttl=60)
    token = policy.seal_for(ctx_for(), "x")
    assert policy.open_for(ctx_for(), token) == "x"
    with pytest.raises(McpError, match=REJECTED):
        policy.open_for(ctx_for(), token)
    assert len(seen) == 2 and seen[0][0] == seen[1][0]
    assert 60 <= seen[0][1] <= 60 + policy.leeway + 1


def test_encrypting_policy():
    policy = state.StatePolicy(keys=KEY, encrypt=True)
    token = policy.seal_for(ctx_for(), {"plan": "secret"})
    assert token.startswith("e1.k1.") and "plan" not in token
    assert policy.open_for(ctx_for(), token) == {"plan": "secret"}


def test_store_errors_are_not_disguised_as_invalid_state():
    class Down:
        def consume(self, token_id: str, ttl: float) -> bool:
            raise ConnectionError("replay store unreachable")

    policy = state.StatePolicy(keys=KEY, once=True, replay_store=Down())
    token = policy.seal_for(ctx_for(), 1)
    with pytest.raises(ConnectionError, match="^replay store unreachable$"):
        policy.open_for(ctx_for(), token)


# -- the boundary in a real rondo.Server (in-memory transport) --------------------------------

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def make_server(policy):
    import rondo
    from rondo import InputRequired

    server = rondo.Server("travel", state=policy)
    runs: list[Any] = []

    @server.tool
    def book(city: str, ctx: rondo.Context) -> Any:
        """Book a trip in two rounds; the first round's quote travels in the request state."""
        runs.append(ctx.state)
        if ctx.state is None:
            return InputRequired(state={"quote": 120, "city": city})
        return f"booked {ctx.state['city']} at {ctx.state['quote']}"

    return server, runs


def call(server, arguments, state_token=None, auth=None, rid=1):
    from rondo.testing import connect

    params: dict[str, Any] = {"name": "book", "arguments": arguments, "_meta": META}
    if state_token is not None:
        params["requestState"] = state_token
    message = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    return asyncio.run(connect(server, auth=auth).send(message))


def test_the_server_seals_handler_state_and_hands_back_verified_data():
    server, runs = make_server(state.StatePolicy(keys=KEY, principal=by_auth))
    first = call(server, {"city": "Oslo"}, auth="alice")["result"]
    assert first["resultType"] == "input_required"
    token = first["requestState"]
    assert token.startswith("s1.k1.")
    final = call(server, {"city": "Oslo"}, token, auth="alice", rid=2)["result"]
    assert final["content"][0]["text"] == "booked Oslo at 120"
    assert runs[0] is None and runs[1]["quote"] == 120


@pytest.mark.parametrize(
    ("arguments", "auth", "mutate"),
    [
        ({"city": "Oslo"}, "alice", lambda t: t + "-TAMPERED"),
        ({"city": "Oslo"}, "alice", lambda t: t[:-5]),
        ({"city": "Paris"}, "alice", lambda t: t),
        ({"city": "Oslo"}, "mallory", lambda t: t),
    ],
)
def test_the_server_refuses_bad_state_before_the_handler_runs(arguments, auth, mutate):
    server, runs = make_server(state.StatePolicy(keys=KEY, principal=by_auth))
    token = call(server, {"city": "Oslo"}, auth="alice")["result"]["requestState"]
    runs.clear()
    response = call(server, arguments, mutate(token), auth=auth, rid=2)
    assert response["error"] == {"code": -32602, "message": state.REJECTED_MESSAGE}
    assert runs == []


def test_state_none_hands_the_handler_the_raw_string():
    import rondo

    server = rondo.Server("travel", state=None)
    seen: list[Any] = []

    @server.tool
    def book(city: str, ctx: rondo.Context) -> str:
        """Echo the raw state."""
        seen.append(ctx.state)
        return "ok"

    assert call(server, {"city": "Oslo"}, "anything-at-all")["result"]["content"][0]["text"] == "ok"
    assert seen == ["anything-at-all"]
