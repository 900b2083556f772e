"""rondo.state.seal/open: round trips, bindings, and every reason a token is refused."""

from __future__ import annotations

import base64
import json
import logging
import re
import types

import pytest

import rondo.state as state
from rondo.server.context import Context
from rondo.wire.errors import INVALID_PARAMS, McpError

# The one answer every refused requestState gets, whatever the reason (logged, never sent).
REJECTED = f"^{re.escape(state.REJECTED_MESSAGE)}$"

SECRET = b"s" * 32
OTHER = b"o" * 32
PARAMS = {"name": "book", "arguments": {"city": "Oslo", "nights": 2, "tags": ["a", "b"]}}


def ctx_for(params=None, method="tools/call", server="travel"):
    return Context(
        types.SimpleNamespace(name=server),
        request_method=method,
        request_params=PARAMS if params is None else params,
    )


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


STEP = object()


def sealed(data=STEP, ctx=None, **kw):
    if "keys" not in kw:
        kw.setdefault("secret", SECRET)
    kw.setdefault("principal", "alice")
    return state.seal({"step": 1} if data is STEP else data, ctx or ctx_for(), **kw)


def refused(token, ctx=None, caplog=None, **kw) -> str:
    """Open must fail with the one -32602 error; returns the debug reason that was logged."""
    if "keys" not in kw:
        kw.setdefault("secret", SECRET)
    kw.setdefault("principal", "alice")
    if caplog is not None:
        caplog.clear()
    with pytest.raises(McpError, match=REJECTED) as info:
        state.open(token, ctx or ctx_for(), **kw)
    err = info.value
    assert err.code == INVALID_PARAMS == -32602
    assert err.message == state.REJECTED_MESSAGE
    assert err.data is None
    assert err.to_error() == {"code": -32602, "message": state.REJECTED_MESSAGE}
    assert err.__cause__ is None and err.__suppress_context__
    if caplog is None:
        return ""
    reasons = [r for r in caplog.records if r.name == "rondo.state" and r.levelno == logging.DEBUG]
    assert len(reasons) == 1
    return reasons[0].getMessage()


@pytest.fixture
def debug_log(caplog):
    caplog.set_level(logging.DEBUG, logger="rondo.state")
    return caplog


# -- round trips ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [None, 0, 1, 1.0, -0.5, 2**80, "x", "ünïcode ☃", True, [], {}, [1, 1.0, None, {"a": [True]}],
     {"nested": {"deep": [{"k": "v"}], "n": 1.5}}],
)
@pytest.mark.parametrize("encrypt", [False, True])
def test_any_json_value_round_trips_with_its_types(data, encrypt):
    token = sealed(data, encrypt=encrypt)
    opened = state.open(token, ctx_for(), secret=SECRET, principal="alice")
    assert json.dumps(opened) == json.dumps(data)
    assert type(opened) is type(data)


def test_signed_tokens_are_readable_and_name_their_key():
    token = state.seal({"cart": 7}, ctx_for(), keys=[("k1", SECRET)], principal="alice")
    form, kid, claims, tag = token.split(".")
    assert (form, kid) == ("s1", "k1")
    decoded = json.loads(base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4)))
    assert decoded["d"] == {"cart": 7}
    assert decoded["m"] == "tools/call" and decoded["a"] == "travel"
    # The principal and the params are bound by the MAC, not written into the token.
    assert "alice" not in token and "Oslo" not in json.dumps(decoded)
    assert len(base64.urlsafe_b64decode(tag + "=")) == 32


def test_encrypted_tokens_hide_the_data():
    token = sealed({"secret-plan": "attack at dawn"}, encrypt=True)
    assert token.startswith("e1.")
    sealed_parts = token.split(".")[2:]
    assert sealed_parts  # e1.KID.NONCE.BOX: the checks below cannot pass on nothing
    for part in sealed_parts:
        assert b"attack" not in base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    assert state.open(token, ctx_for(), secret=SECRET, principal="alice") == {
        "secret-plan": "attack at dawn"
    }


def test_each_seal_of_one_value_differs_only_when_it_must():
    ctx = ctx_for()
    clock = Clock()
    assert sealed(ctx=ctx, clock=clock) == sealed(ctx=ctx, clock=clock)  # deterministic signing
    assert sealed(ctx=ctx, clock=clock, once=True) != sealed(ctx=ctx, clock=clock, once=True)
    assert sealed(ctx=ctx, encrypt=True) != sealed(ctx=ctx, encrypt=True)  # fresh nonce


def test_unbound_params_may_change_between_rounds():
    token = sealed(ctx=ctx_for({**PARAMS, "_meta": {"progressToken": 1}}))
    retry = {
        **PARAMS,
        "_meta": {"progressToken": 2, "io.modelcontextprotocol/clientCapabilities": {}},
        "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
        "requestState": token,
    }
    assert state.open(token, ctx_for(retry), secret=SECRET, principal="alice") == {"step": 1}


def test_map_order_does_not_matter():
    token = sealed(ctx=ctx_for({"arguments": {"b": 1, "a": {"y": 2, "x": 3}}, "name": "t"}))
    reordered = {"name": "t", "arguments": {"a": {"x": 3, "y": 2}, "b": 1}}
    assert state.open(token, ctx_for(reordered), secret=SECRET, principal="alice") == {"step": 1}


def test_anonymous_must_be_explicit():
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'principal'"):
        state.seal({}, ctx_for(), secret=SECRET)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'principal'"):
        state.open("x", ctx_for(), secret=SECRET)  # type: ignore[call-arg]
    token = sealed(principal=None)
    assert state.open(token, ctx_for(), secret=SECRET, principal=None) == {"step": 1}


def test_principal_must_be_a_string_or_none():
    with pytest.raises(TypeError, match=r"principal must be a str or None \(anonymous\), not int"):
        sealed(principal=42)
    with pytest.raises(TypeError, match=r"principal must be a str or None \(anonymous\), not bytes"):
        state.open(sealed(), ctx_for(), secret=SECRET, principal=b"alice")


def test_data_must_be_json():
    with pytest.raises(TypeError, match="JSON"):
        sealed({"when": object()})


# -- every refusal is the same error ----------------------------------------------------------


def test_tampered_claims_are_refused(debug_log):
    form, kid, claims, tag = sealed({"role": "user"}).split(".")
    raw = base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4))
    forged = base64.urlsafe_b64encode(raw.replace(b"user", b"root")).rstrip(b"=").decode()
    reason = refused(f"{form}.{kid}.{forged}.{tag}", caplog=debug_log)
    assert "signature does not verify" in reason


def test_trailing_garbage_is_refused(debug_log):
    token = sealed()
    assert "signature" in refused(token + "-TAMPERED", caplog=debug_log)
    assert "parts" in refused(token + ".x", caplog=debug_log)


@pytest.mark.parametrize("encrypt", [False, True])
def test_truncated_tokens_are_refused(encrypt):
    token = sealed(encrypt=encrypt)
    for cut in (0, 1, 3, len(token) // 2, len(token) - 1):
        refused(token[:cut])


def test_unknown_key_id_is_refused(debug_log):
    token = state.seal({}, ctx_for(), keys=[("gone", OTHER)], principal="alice")
    reason = refused(token, keys=[("k1", SECRET)], caplog=debug_log)
    assert "unknown key id 'gone'" in reason


def test_a_secret_sealed_token_is_unknown_to_another_secret(debug_log):
    token = state.seal({}, ctx_for(), secret=OTHER, principal="alice")
    assert "unknown key id" in refused(token, caplog=debug_log)


def test_a_known_id_with_another_secret_is_refused(debug_log):
    token = state.seal({}, ctx_for(), keys=[("k1", OTHER)], principal="alice")
    assert "signature does not verify" in refused(token, keys=[("k1", SECRET)], caplog=debug_log)


def test_expired_tokens_are_refused_after_the_skew_allowance(debug_log):
    clock = Clock()
    token = sealed(ttl=60, clock=clock)
    clock.now += 60 + state.codec.DEFAULT_LEEWAY  # still inside the allowance
    assert state.open(token, ctx_for(), secret=SECRET, principal="alice", clock=clock)
    clock.now += 1
    assert "expired" in refused(token, clock=clock, caplog=debug_log)


def test_leeway_is_configurable_and_bounded():
    clock = Clock()
    token = sealed(ttl=10, clock=clock)
    clock.now += 11
    refused(token, clock=clock, leeway=0)
    assert state.open(token, ctx_for(), secret=SECRET, principal="alice", clock=clock, leeway=5)
    with pytest.raises(ValueError, match="leeway must be 0 to 60 seconds, got 3600"):
        state.open(token, ctx_for(), secret=SECRET, principal="alice", leeway=3600)


def test_tokens_from_a_node_whose_clock_runs_far_ahead_are_refused(debug_log):
    ahead = Clock(1_800_000_000.0 + 3600)
    token = sealed(clock=ahead)
    assert "further ahead" in refused(token, clock=Clock(), caplog=debug_log)


def test_another_method_is_refused(debug_log):
    token = sealed(ctx=ctx_for(method="tools/call"))
    reason = refused(token, ctx=ctx_for(method="prompts/get"), caplog=debug_log)
    assert "'tools/call'" in reason and "'prompts/get'" in reason


@pytest.mark.parametrize(
    "other_params",
    [
        {"name": "book", "arguments": {"city": "Oslo", "nights": 3, "tags": ["a", "b"]}},
        {"name": "book", "arguments": {"city": "Oslo", "nights": 2.0, "tags": ["a", "b"]}},
        {"name": "book", "arguments": {"city": "Oslo", "nights": 2, "tags": ["b", "a"]}},
        {"name": "book", "arguments": {"city": "Oslo", "nights": 2, "tags": ["a", "b"], "x": 1}},
        {"name": "book", "arguments": {"city": "Oslo", "nights": 2}},
        {"name": "book", "arguments": {"city": "Oslo", "nights": True, "tags": ["a", "b"]}},
        {"name": "cancel", "arguments": {"city": "Oslo", "nights": 2, "tags": ["a", "b"]}},
        {"name": "book"},
        {"name": "book", "arguments": PARAMS["arguments"], "extra": None},
    ],
)
def test_other_params_are_refused(other_params, debug_log):
    reason = refused(sealed(), ctx=ctx_for(other_params), caplog=debug_log)
    assert "other params or another principal" in reason


@pytest.mark.parametrize("encrypt", [False, True])
def test_another_principal_is_refused(encrypt):
    token = sealed(principal="alice", encrypt=encrypt)
    refused(token, principal="mallory")
    refused(token, principal=None)
    refused(sealed(principal=None, encrypt=encrypt), principal="alice")


def test_another_audience_is_refused(debug_log):
    token = sealed(ctx=ctx_for(server="travel"))
    assert "'billing'" in refused(token, ctx=ctx_for(server="billing"), caplog=debug_log)


@pytest.mark.parametrize("value", [None, 42, 1.5, b"s1.a.b.c", ["s1"], {"t": 1}, True])
def test_non_strings_are_refused(value, debug_log):
    assert "not a string" in refused(value, caplog=debug_log)


def test_oversized_tokens_are_refused_before_any_work(debug_log):
    reason = refused("s1." + "A" * state.MAX_TOKEN_CHARS, caplog=debug_log)
    assert "over the 16384 limit" in reason


@pytest.mark.parametrize(
    "token", ["", "s1", "s1..", "s1.k.x.y", "x1.~AAAA.a.b", "s1.~8zt_CVm0Gj8E.e30.", "ß.a.b.c"]
)
def test_malformed_tokens_are_refused(token):
    refused(token)


@pytest.mark.parametrize("part", [2, 3])
def test_encrypted_tokens_refuse_any_changed_part(part, debug_log):
    token = sealed(encrypt=True)
    pieces = token.split(".")
    text = pieces[part]
    pieces[part] = text[:-1] + ("A" if text[-1] != "A" else "B")
    refused(".".join(pieces), caplog=debug_log)


def test_encrypted_tokens_are_bound_like_signed_ones(debug_log):
    token = sealed(encrypt=True)
    assert "decryption failed" in refused(token, ctx=ctx_for({"name": "x"}), caplog=debug_log)
    assert "'prompts/get'" in refused(token, ctx=ctx_for(method="prompts/get"), caplog=debug_log)
    assert "'other'" in refused(token, ctx=ctx_for(server="other"), caplog=debug_log)


def test_signed_and_encrypted_tokens_both_open_with_the_same_keys():
    # Switching `encrypt` on or off across a fleet is a non-event, like a key rotation.
    ctx = ctx_for()
    for token in (sealed(encrypt=True), sealed(encrypt=False)):
        assert state.open(token, ctx, secret=SECRET, principal="alice") == {"step": 1}


def tampered(token: str) -> str:
    return token[:-2] + ("AA" if token[-2:] != "AA" else "BB")  # always a different token


def test_all_refusals_share_one_message():
    clock = Clock()
    tokens = {
        "tampered": tampered(sealed()),
        "expired": sealed(ttl=1, clock=Clock(clock.now - 100)),
        "method": sealed(ctx=ctx_for(method="resources/read")),
        "principal": sealed(principal="bob"),
        "unknown key": state.seal({}, ctx_for(), keys=[("zz", OTHER)], principal="alice"),
    }
    messages = set()
    for token in tokens.values():
        with pytest.raises(McpError, match=REJECTED) as info:
            state.open(token, ctx_for(), secret=SECRET, principal="alice", clock=clock)
        messages.add((info.value.code, info.value.message, info.value.data))
    assert messages == {(-32602, state.REJECTED_MESSAGE, None)}


# -- limits -----------------------------------------------------------------------------------


def test_ttl_is_capped_at_900_seconds():
    assert sealed(ttl=900)
    assert sealed(ttl=0.5)
    for bad in (901, 900.001, 3600, 0, -5):
        with pytest.raises(ValueError, match="900"):
            sealed(ttl=bad)
    for bad in ("300", None, True):
        with pytest.raises(TypeError, match=f"ttl must be a number of seconds, not {type(bad).__name__}$"):
            sealed(ttl=bad)


def test_a_900_second_token_lives_900_seconds():
    clock = Clock()
    token = sealed(ttl=900, clock=clock)
    clock.now += 900
    assert state.open(token, ctx_for(), secret=SECRET, principal="alice", clock=clock)


def test_oversized_state_is_refused_at_seal():
    with pytest.raises(ValueError, match="16384-byte limit"):
        sealed({"blob": "x" * 16_000})
    with pytest.raises(ValueError, match="16384-byte limit"):
        sealed({"blob": "x" * 16_000}, encrypt=True)
    assert len(sealed({"blob": "x" * 11_000})) <= state.MAX_TOKEN_CHARS


# -- configuration errors are raised at the call, before any token is touched -----------------


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({}, ValueError, r"pass exactly one of secret="),
        ({"secret": SECRET, "keys": [("a", SECRET)]}, ValueError, r"pass exactly one of secret="),
        ({"secret": b"short"}, ValueError, "secret is 5 bytes"),
        ({"secret": "s" * 40}, TypeError, "secret must be bytes, not str"),
        ({"secret": 12345}, TypeError, "secret must be bytes, not int"),
        ({"keys": []}, ValueError, "keys must hold 1 to 8 keys, got 0"),
        ({"keys": [(f"k{i}", SECRET) for i in range(9)]}, ValueError, "keys must hold 1 to 8 keys, got 9"),
        ({"keys": [("a", SECRET), ("a", OTHER)]}, ValueError, "key id 'a' appears twice"),
        ({"keys": [("", SECRET)]}, ValueError, r"keys\[0\] id '' must be 1 to 32 characters"),
        ({"keys": [("x" * 33, SECRET)]}, ValueError, r"keys\[0\] id 'x{33}' must be 1 to 32 characters"),
        ({"keys": [("has space", SECRET)]}, ValueError, r"keys\[0\] id 'has space' must be"),
        ({"keys": [("dot.ted", SECRET)]}, ValueError, r"keys\[0\] id 'dot.ted' must be"),
        ({"keys": [("~fp", SECRET)]}, ValueError, r"keys\[0\] id '~fp' must be"),
        ({"keys": [(1, SECRET)]}, TypeError, r"keys\[0\] id must be a str, not int"),
        ({"keys": [("a", b"short")]}, ValueError, "secret of key 'a' is 5 bytes"),
        ({"keys": [("a", SECRET, "extra")]}, TypeError, r"keys\[0\] must be an \(id, secret\) pair"),
        ({"keys": {"a": SECRET}}, TypeError, r"keys must be a list of \(id, secret\) pairs"),
        ({"keys": "a:secret"}, TypeError, r"keys must be a list of \(id, secret\) pairs"),
    ],
)
def test_misconfiguration_raises_at_the_call(kwargs, error, needle):
    with pytest.raises(error, match=needle):
        state.seal({}, ctx_for(), principal=None, **kwargs)
    with pytest.raises(error, match=needle):
        state.open("s1.a.b.c", ctx_for(), principal=None, **kwargs)


def test_key_ids_may_use_the_whole_alphabet():
    kid = "Az09_-" + "k" * 26
    token = state.seal({}, ctx_for(), keys=[(kid, SECRET)], principal=None)
    assert token.split(".")[1] == kid
    assert state.open(token, ctx_for(), keys=[(kid, SECRET)], principal=None) == {}


def test_a_keyring_object_can_be_passed_as_keys():
    ring = state.Keyring([("k1", SECRET)])
    token = state.seal({}, ctx_for(), keys=ring, principal=None)
    assert state.open(token, ctx_for(), keys=ring, principal=None) == {}
    assert "7373" not in repr(ring) and "sss" not in repr(ring)


def test_lone_surrogates_in_params_still_bind():
    params = {"name": "t", "arguments": {"s": "\ud800"}}
    token = sealed(ctx=ctx_for(params))
    assert state.open(token, ctx_for(dict(params)), secret=SECRET, principal="alice")
    refused(token, ctx=ctx_for({"name": "t", "arguments": {"s": "\ud801"}}))


def test_keys_may_be_given_as_lists_and_are_cached_by_content():
    as_lists = [["k1", SECRET], ["k0", OTHER]]
    as_tuples = [("k1", SECRET), ("k0", OTHER)]
    token = state.seal({}, ctx_for(), keys=as_lists, principal=None)
    assert state.open(token, ctx_for(), keys=as_tuples, principal=None) == {}
    refused(token, keys=[("k1", OTHER)], principal=None)  # same ids, other secret: no cache mix-up
