"""Properties of sealed state: every one-byte change and every change of the bound params is
refused; map key order never matters; JSON values come back with their types."""

from __future__ import annotations

import math
import random
import types
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import rondo.state as state
from rondo.server.context import Context
from rondo.wire.errors import McpError

KEYS = [("k1", b"1" * 32), ("k2", b"2" * 32)]
SETTINGS = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
params_maps = st.dictionaries(st.text(max_size=8), json_values, max_size=5)
principals = st.none() | st.text(max_size=10)


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality as the binding sees it: maps ignore order; arrays, numeric types and the
    sign of zero do not. Written independently of the code under test."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return bool(a == b)


def salient(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if k not in state.UNBOUND_PARAMS}


def ctx_for(params: dict[str, Any], method: str = "tools/call") -> Context:
    return Context(types.SimpleNamespace(name="srv"), request_method=method,
                   request_params=params)


def reordered(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        items = [(k, reordered(v, rng)) for k, v in value.items()]
        rng.shuffle(items)
        return dict(items)
    if isinstance(value, list):
        return [reordered(v, rng) for v in value]
    return value


def opens(token: str, params: dict[str, Any], principal: str | None) -> bool:
    try:
        state.open(token, ctx_for(params), keys=KEYS, principal=principal)
    except McpError as exc:
        assert exc.code == -32602 and exc.message == state.REJECTED_MESSAGE and exc.data is None
        return False
    return True


@st.composite
def mutations(draw: st.DrawFn, value: Any) -> Any:
    """`value` with one change somewhere inside it (possibly a no-op; callers filter those)."""
    if isinstance(value, (dict, list)) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value) if isinstance(value, dict) else range(len(value))))
        copy = dict(value) if isinstance(value, dict) else list(value)
        copy[key] = draw(mutations(copy[key]))
        return copy
    choice = draw(st.integers(0, 3))
    if choice == 0 and isinstance(value, dict):
        copy = dict(value)
        if value and draw(st.booleans()):
            del copy[draw(st.sampled_from(sorted(value)))]
        else:
            copy[draw(st.text(max_size=6))] = draw(json_values)
        return copy
    if choice == 1 and isinstance(value, list):
        copy = list(value)
        if len(copy) >= 2 and draw(st.booleans()):
            i, j = draw(st.permutations(range(len(copy))))[:2]
            copy[i], copy[j] = copy[j], copy[i]
        else:
            copy.insert(draw(st.integers(0, len(copy))), draw(json_values))
        return copy
    if choice == 2 and isinstance(value, (int, float)) and not isinstance(value, bool):
        # Same number, other type: 1 <-> 1.0 must not be confused.
        if isinstance(value, int) and abs(value) < 2**53:
            return float(value)
        if isinstance(value, float) and value.is_integer():
            return int(value)
    return draw(json_values)


@SETTINGS
@given(
    data=json_values,
    params=params_maps,
    principal=principals,
    encrypt=st.booleans(),
    once=st.booleans(),
    where=st.integers(min_value=0),
    replacement=st.characters(codec="utf-8", exclude_categories=["Cs"]),
)
def test_any_single_byte_change_is_refused(
    data, params, principal, encrypt, once, where, replacement
):
    token = state.seal(data, ctx_for(params), keys=KEYS, principal=principal, encrypt=encrypt,
                       once=once)
    i = where % len(token)
    assume(token[i] != replacement)
    changed = token[:i] + replacement + token[i + 1:]
    assert not opens(changed, params, principal)


@SETTINGS
@given(data=json_values, params=params_maps, encrypt=st.booleans(), where=st.integers(0),
       extra=st.characters(codec="ascii"))
def test_any_inserted_or_deleted_byte_is_refused(data, params, encrypt, where, extra):
    token = state.seal(data, ctx_for(params), keys=KEYS, principal=None, encrypt=encrypt)
    i = where % len(token)
    assert not opens(token[:i] + token[i + 1:], params, None)
    j = where % (len(token) + 1)
    assert not opens(token[:j] + extra + token[j:], params, None)
    assert not opens(token + extra, params, None)  # trailing garbage, e.g. "-TAMPERED"


@SETTINGS
@given(params=params_maps, principal=principals, encrypt=st.booleans(), data=st.data())
def test_any_change_to_the_bound_params_is_refused(params, principal, encrypt, data):
    token = state.seal({"s": 1}, ctx_for(params), keys=KEYS, principal=principal,
                       encrypt=encrypt)
    changed = data.draw(mutations(params))
    assume(isinstance(changed, dict))
    assume(not json_equal(salient(params), salient(changed)))
    assert not opens(token, changed, principal)


@SETTINGS
@given(first=params_maps, second=params_maps, principal=principals)
def test_params_open_exactly_when_they_are_json_equal(first, second, principal):
    token = state.seal(0, ctx_for(first), keys=KEYS, principal=principal)
    assert opens(token, second, principal) == json_equal(salient(first), salient(second))


@SETTINGS
@given(params=params_maps, principal=principals, encrypt=st.booleans(), seed=st.integers())
def test_map_key_order_never_matters(params, principal, encrypt, seed):
    token = state.seal([1, 2], ctx_for(params), keys=KEYS, principal=principal, encrypt=encrypt)
    shuffled = reordered(params, random.Random(seed))
    assert opens(token, shuffled, principal)


@SETTINGS
@given(params=params_maps, a=principals, b=principals)
def test_principals_bind_exactly(params, a, b):
    token = state.seal(None, ctx_for(params), keys=KEYS, principal=a)
    assert opens(token, params, b) == (a == b)


@SETTINGS
@given(data=json_values, encrypt=st.booleans())
def test_data_comes_back_json_equal(data, encrypt):
    token = state.seal(data, ctx_for({}), keys=KEYS, principal=None, encrypt=encrypt)
    assert json_equal(state.open(token, ctx_for({}), keys=KEYS, principal=None), data)


@pytest.mark.parametrize(
    ("sealed_with", "opened_with"),
    [(1, 1.0), (1.0, 1), (0.0, -0.0), (True, 1), (0, False), ("1", 1), (None, "null"),
     ([1, 2], [2, 1]), ({"a": 1}, {"a": [1]})],
)
def test_numeric_types_and_array_order_are_bound(sealed_with, opened_with):
    token = state.seal(0, ctx_for({"arguments": {"x": sealed_with}}), keys=KEYS, principal=None)
    assert not opens(token, {"arguments": {"x": opened_with}}, None)
    assert opens(token, {"arguments": {"x": sealed_with}}, None)


@SETTINGS
@given(value=json_values | st.text().map(lambda s: s + "\n\r\t\x00"))
def test_the_canonical_binding_never_holds_a_raw_newline(value):
    # The MAC input is head + "\n" + binding: a raw newline in the binding would blur the split.
    assert b"\n" not in state.codec.binding({"arguments": value}, None)
