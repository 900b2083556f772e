"""Keys: three-step rotation, secret -> keyring migration, RONDO_STATE_KEYS, the per-process key."""

from __future__ import annotations

import base64
import logging
import re
import subprocess
import sys
import types

import pytest

import rondo.state as state
from rondo.server.context import Context
from rondo.state import keys as keys_module
from rondo.wire.errors import McpError

# The one answer every refused requestState gets, whatever the reason (logged, never sent).
REJECTED = f"^{re.escape(state.REJECTED_MESSAGE)}$"

A = b"a" * 32
B = b"b" * 32
C = b"c" * 32
PARAMS = {"name": "book", "arguments": {"city": "Oslo"}}


def ctx():
    return Context(types.SimpleNamespace(name="travel"), request_method="tools/call",
                   request_params=PARAMS)


def node(**config) -> state.StatePolicy:
    """One server process of the fleet, on a given key configuration."""
    return state.StatePolicy(principal=lambda c: "alice", **config)


def opens(reader: state.StatePolicy, writer: state.StatePolicy) -> bool:
    token = writer.seal_for(ctx(), {"cart": 7})
    try:
        return reader.open_for(ctx(), token) == {"cart": 7}
    except McpError:
        return False


ROTATION = [
    [("a", A)],            # steady state
    [("a", A), ("b", B)],  # 1. every node learns b (verify only), still signs with a
    [("b", B), ("a", A)],  # 2. every node signs with b, still accepts a
    [("b", B)],            # 3. a retired once every a-token has expired
]


@pytest.mark.parametrize("encrypt", [False, True])
@pytest.mark.parametrize("step", [1, 2, 3])
def test_each_rotation_step_works_both_ways(step, encrypt):
    previous = node(keys=ROTATION[step - 1], encrypt=encrypt)
    following = node(keys=ROTATION[step], encrypt=encrypt)
    assert opens(previous, following), "a node on the old config refuses the new config's tokens"
    assert opens(following, previous), "a node on the new config refuses the old config's tokens"


def test_skipping_a_step_breaks_a_mixed_fleet():
    # Why there are three steps: [a] and [b] nodes cannot read each other.
    assert not opens(node(keys=[("a", A)]), node(keys=[("b", B)]))
    # And signing with b before every node knows it strands tokens on [a] nodes.
    assert not opens(node(keys=[("a", A)]), node(keys=[("b", B), ("a", A)]))


def test_tokens_name_the_signing_key():
    assert node(keys=ROTATION[1]).seal_for(ctx(), 1).split(".")[1] == "a"
    assert node(keys=ROTATION[2]).seal_for(ctx(), 1).split(".")[1] == "b"


@pytest.mark.parametrize("encrypt", [False, True])
@pytest.mark.parametrize(
    "ring", [[("k1", A)], [("k1", A), ("k0", C)], [("k0", C), ("k1", A)], [("x", C), ("y", A)]]
)
def test_secret_sealed_tokens_open_with_any_keyring_holding_the_secret(ring, encrypt):
    assert opens(node(keys=ring, encrypt=encrypt), node(secret=A, encrypt=encrypt))


@pytest.mark.parametrize("encrypt", [False, True])
@pytest.mark.parametrize("ring", [[("k1", A)], [("k1", A), ("k0", C)]])
def test_keyring_tokens_signed_with_the_secret_open_with_the_bare_secret(ring, encrypt):
    assert opens(node(secret=A, encrypt=encrypt), node(keys=ring, encrypt=encrypt))


def test_secret_to_keyring_migration_needs_no_coordinated_switch():
    # secret=A -> keys=[k1:A] (same key, now named) -> then the usual rotation to B.
    steps = [node(secret=A), node(keys=[("k1", A)]), node(keys=[("k1", A), ("k2", B)]),
             node(keys=[("k2", B), ("k1", A)]), node(keys=[("k2", B)])]
    for previous, following in zip(steps, steps[1:], strict=False):
        assert opens(previous, following)
        assert opens(following, previous)


def test_a_bare_secret_refuses_what_another_secret_signed():
    assert not opens(node(secret=A), node(keys=[("k1", B)]))
    assert not opens(node(secret=A), node(secret=B))
    assert not opens(node(keys=[("k1", A)]), node(secret=B))


def test_secret_tokens_name_a_fingerprint_not_the_secret():
    token = node(secret=A).seal_for(ctx(), 1)
    kid = token.split(".")[1]
    assert kid.startswith("~") and len(kid) == 13
    assert kid == state.Keyring(secret=A).signing_id != state.Keyring(secret=B).signing_id
    assert base64.urlsafe_b64encode(A).decode()[:8] not in token


def test_keyring_repr_hides_secrets():
    ring = state.Keyring([("k1", A), ("k2", B)])
    assert repr(ring) == "<Keyring ids=['k1', 'k2']>"
    assert "aaaa" not in repr(state.StatePolicy(keys=[("k1", A)]))


# -- RONDO_STATE_KEYS -------------------------------------------------------------------------


def b64(secret: bytes, pad: bool = False) -> str:
    text = base64.urlsafe_b64encode(secret).decode()
    return text if pad else text.rstrip("=")


def test_env_format_parses_in_order():
    text = f"k2:{b64(B)}, k1:{b64(A, pad=True)} "
    assert state.parse_env_keys(text) == [("k2", B), ("k1", A)]


def test_env_secrets_may_use_the_url_safe_alphabet():
    secret = bytes(range(250, 256)) * 6  # encodes with "-" and "_"
    encoded = b64(secret)
    assert "-" in encoded or "_" in encoded
    assert state.parse_env_keys(f"k:{encoded}") == [("k", secret)]


@pytest.mark.parametrize(
    ("text", "needle"),
    [("k1", "entry 1 is not id:base64url-secret"),
     (f"k1:{b64(A)},", "entry 2 is empty"),
     (f":{b64(A)}", "entry 1 is not id:base64url-secret"),
     ("k1:", "entry 1 is not id:base64url-secret"),
     ("k1:not base64!", "the secret of key 'k1' is not base64url"),
     (f"k1:{b64(A)},,k2:{b64(B)}", "entry 2 is empty"),
     ("k1:a+b/c", "the secret of key 'k1' is not base64url"),
     ("k1:=abc", "the secret of key 'k1' is not base64url")],
)
def test_malformed_env_is_a_value_error(text, needle):
    with pytest.raises(ValueError, match="^RONDO_STATE_KEYS: " + needle) as info:
        state.parse_env_keys(text)
    assert b64(A)[:10] not in str(info.value)  # never echo a secret


@pytest.mark.parametrize(
    ("text", "needle"),
    [(f"k1:{b64(b'short')}", "secret of key 'k1' is 5 bytes"),
     (f"k1:{b64(A)},k1:{b64(B)}", "key id 'k1' appears twice"),
     (f"bad.id:{b64(A)}", r"keys\[0\] id 'bad.id' must be 1 to 32 characters"),
     (",".join(f"k{i}:{b64(A)}" for i in range(9)), "keys must hold 1 to 8 keys, got 9")],
)
def test_from_env_validates_like_keys(text, needle):
    with pytest.raises(ValueError, match=needle):
        state.StatePolicy.from_env({"RONDO_STATE_KEYS": text})


def test_from_env_builds_the_keyring_and_passes_options():
    environ = {"RONDO_STATE_KEYS": f"k2:{b64(B)},k1:{b64(A)}"}
    policy = state.StatePolicy.from_env(environ, ttl=60, principal=lambda c: "alice")
    assert policy.keyring.ids == ("k2", "k1") and policy.ttl == 60 and not policy.ephemeral
    assert opens(policy, node(keys=[("k1", A)]))
    assert opens(node(keys=[("k2", B)]), policy)
    with pytest.raises(TypeError, match="from_env reads the keys from the environment; pass other options only"):
        state.StatePolicy.from_env(environ, keys=[("x", A)])


def test_from_env_reads_os_environ_by_default(monkeypatch):
    monkeypatch.setenv("RONDO_STATE_KEYS", f"envkey:{b64(C)}")
    assert state.StatePolicy.from_env().keyring.ids == ("envkey",)


@pytest.fixture
def fresh_process_key(monkeypatch):
    monkeypatch.setattr(keys_module, "_process_keyring", None)


@pytest.mark.parametrize("environ", [{}, {"RONDO_STATE_KEYS": ""}, {"RONDO_STATE_KEYS": "  "}])
def test_no_keys_means_one_random_key_per_process(environ, fresh_process_key, caplog):
    caplog.set_level(logging.DEBUG, logger="rondo.state")
    first = state.StatePolicy.from_env(environ)
    second = state.StatePolicy()
    assert first.ephemeral and second.ephemeral
    assert first.keyring is second.keyring
    assert opens(first, second) and opens(second, first)
    # Right for stdio (one process per client): nothing to warn about there.
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_serving_http_on_the_random_key_warns_once_per_app(fresh_process_key, caplog):
    import rondo

    caplog.set_level(logging.WARNING, logger="rondo.http")
    rondo.Server("ephemeral", state=state.StatePolicy()).asgi()
    rondo.Server("keyed", state=state.StatePolicy(keys=[("a", b"k" * 32)])).asgi()
    warnings = [r.getMessage() for r in caplog.records if r.name == "rondo.http.state_key"]
    assert len(warnings) == 1
    assert "RONDO_STATE_KEYS" in warnings[0] and "several workers" in warnings[0]


@pytest.mark.slow
def test_the_random_key_differs_between_processes():
    code = (
        "import types, rondo.state as s\n"
        "from rondo.server.context import Context\n"
        "c = Context(types.SimpleNamespace(name='travel'), request_method='tools/call',"
        " request_params={'name': 'book', 'arguments': {'city': 'Oslo'}})\n"
        "print(s.StatePolicy(principal=lambda c: 'alice').seal_for(c, {'cart': 7}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    token = out.stdout.strip()
    with pytest.raises(McpError, match=REJECTED):
        node().open_for(ctx(), token)


@pytest.mark.slow
def test_generated_env_entries_are_valid():
    out = subprocess.run([sys.executable, "-m", "rondo.state", "k2026"], capture_output=True,
                         text=True, check=True)
    (pair,) = state.parse_env_keys(out.stdout.strip())
    assert pair[0] == "k2026" and len(pair[1]) == 32
    assert len(state.new_secret_text()) == 43
