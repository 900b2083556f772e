"""The proxy task id (`t2.<upstream id>.<key id>.<mac>`, gateway/tasks.py) as a parser: any
string either unwraps to the upstream id that was wrapped for this upstream, key and principal,
or is refused -32602 (never another exception); an id edited anywhere never unwraps; the MAC
input frames its fields (no field's content moves a boundary); a `t1` id is unknown; an upstream
id too long to carry is refused when wrapped, its task cancelled upstream."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rondo.gateway.tasks import (
    _CATCH,
    MAX_UPSTREAM_ID,
    NOT_FOUND,
    TaskRelay,
    _b64,
    _Caught,
    mac_input,
)
from rondo.state import StatePolicy
from rondo.wire.errors import INVALID_PARAMS, McpError

KEYS = [("k1", b"k" * 32), ("k0", b"o" * 32)]


def relay(identity: str = "up-a") -> TaskRelay:
    return TaskRelay(SimpleNamespace(identity=identity))  # type: ignore[arg-type]


def core(keys: Any = KEYS) -> Any:
    policy = StatePolicy(keys=keys, principal=lambda ctx: getattr(ctx, "who", None))
    return SimpleNamespace(server=SimpleNamespace(state_policy=policy),
                           modern=SimpleNamespace(context=lambda _core, req: req))


def req(who: str | None) -> Any:
    return SimpleNamespace(who=who)


CORE = core()
RELAY = relay()
_ids = st.text(max_size=80)  # the upstream's ids: any text ("." and "\n" too)
_who = st.one_of(st.none(), st.sampled_from(["alice", "bob", "alice\n", "p:alice"]))


def refused(call: Any) -> None:
    with pytest.raises(McpError, match="^(" + NOT_FOUND + "|taskId must be a non-empty string)$") as caught:
        call()
    assert caught.value.code == INVALID_PARAMS


@settings(max_examples=300, deadline=None)
@given(upstream_id=_ids, who=_who, other=_who)
def test_an_id_unwraps_for_its_principal_upstream_and_keys_only(
        upstream_id: str, who: str | None, other: str | None) -> None:
    task_id = RELAY.wrap_id(CORE, req(who), upstream_id)
    assert RELAY.unwrap_id(CORE, req(who), task_id) == upstream_id
    assert relay().unwrap_id(core(), req(who), task_id) == upstream_id  # any replica, same keys
    if other != who:
        refused(lambda: RELAY.unwrap_id(CORE, req(other), task_id))
    refused(lambda: relay("up-b").unwrap_id(CORE, req(who), task_id))  # another upstream
    refused(lambda: RELAY.unwrap_id(core([("k1", b"x" * 32)]), req(who), task_id))


@settings(max_examples=500, deadline=None)
@given(task_id=st.one_of(
    st.text(max_size=600),
    st.builds(lambda parts: ".".join(parts), st.lists(st.text(max_size=40), max_size=6)),
    st.builds(lambda a, b, c: f"t2.{a}.{b}.{c}", st.text("-_=!.AaZz09+/\n é", max_size=30),
              st.sampled_from(["k1", "k0", "kx", "", "~x"]), st.text("-_=AaZz09+/", max_size=30)),
    st.none(), st.integers(), st.lists(st.text(max_size=3), max_size=2)),
    who=_who)
def test_any_value_unwraps_to_what_was_wrapped_or_is_refused(task_id: Any, who: str | None) -> None:
    try:
        upstream_id = RELAY.unwrap_id(CORE, req(who), task_id)
    except McpError as exc:
        assert exc.code == INVALID_PARAMS and exc.message in (
            NOT_FOUND, "taskId must be a non-empty string")
        return
    assert RELAY.wrap_id(CORE, req(who), upstream_id) == task_id  # a forgery never gets here


_edits = st.tuples(st.sampled_from(["insert", "delete", "replace"]), st.integers(0, 10**4),
                   st.characters(codec="utf-8"))


@settings(max_examples=500, deadline=None)
@given(upstream_id=_ids, who=_who, edits=st.lists(_edits, min_size=1, max_size=3))
def test_an_edited_id_never_unwraps(upstream_id: str, who: str | None,
                                    edits: list[tuple[str, int, str]]) -> None:
    task_id = RELAY.wrap_id(CORE, req(who), upstream_id)
    edited = task_id
    for kind, at, char in edits:
        at %= len(edited) + (kind == "insert")
        if kind == "insert":
            edited = edited[:at] + char + edited[at:]
        elif kind == "delete":
            edited = edited[:at] + edited[at + 1:]
        else:
            edited = edited[:at] + char + edited[at + 1:]
        if not edited:
            break
    assume(edited != task_id)
    refused(lambda: RELAY.unwrap_id(CORE, req(who), edited))


@pytest.mark.parametrize("edit", [
    lambda parts: [parts[0], parts[1] + "=", *parts[2:]],  # padding the id part
    lambda parts: [parts[0], "!" + parts[1], *parts[2:]],  # a character base64 would skip
    lambda parts: [*parts[:3], parts[3] + "="],
    lambda parts: [*parts[:3], parts[3][:10] + "\n" + parts[3][10:]],
])
def test_base64_that_decodes_alike_is_still_an_edit(edit: Any) -> None:
    task_id = RELAY.wrap_id(CORE, req("alice"), "task-1")
    edited = ".".join(edit(task_id.split(".")))
    refused(lambda: RELAY.unwrap_id(CORE, req("alice"), edited))


# -- the MAC input frames its fields ------------------------------------------------------------

def forged(task_id: str, upstream_id: str) -> str:
    """`task_id` with its upstream part replaced, the MAC kept."""
    head, _, kid, mac = task_id.split(".")
    return ".".join((head, _b64(upstream_id.encode()), kid, mac))


def test_a_principal_holding_the_old_separator_cannot_take_another_principals_task() -> None:
    # t1 joined the fields with "\n": ("a\np:b", "p:c") and ("a", "p:b\np:c") gave one MAC
    # input, so principal "b\np:c" could rename c's task "a\np:b" to "a" and keep the MAC.
    task_id = RELAY.wrap_id(CORE, req("c"), "a\np:b")
    refused(lambda: RELAY.unwrap_id(CORE, req("b\np:c"), forged(task_id, "a")))
    # The same across upstreams: identity "up-a" with id "x\ny" against "up-a\nx" with "y".
    task_id = RELAY.wrap_id(CORE, req("c"), "x\ny")
    refused(lambda: relay("up-a\nx").unwrap_id(CORE, req("c"), forged(task_id, "y")))


_field = st.text(alphabet="ab\np:09", max_size=10)  # the old separator and prefix, often


def _principal_field(who: str | None) -> str:
    return "" if who is None else "p:" + who


_tuple = st.tuples(_field, _field, st.one_of(st.none(), _field))  # identity, upstream id, who


@st.composite
def _pairs(draw: Any) -> tuple[tuple[str, str, str | None], tuple[str, str, str | None]]:
    """Two (identity, upstream id, principal) tuples: independent, or the second made by
    moving where the first's fields split at a "\n" (what collided under t1's joining)."""
    one = draw(_tuple)
    if draw(st.booleans()):
        return one, draw(_tuple)
    parts = "\n".join((one[0], one[1], _principal_field(one[2]))).split("\n")
    i = draw(st.integers(1, len(parts) - 2))
    j = draw(st.integers(i + 1, len(parts) - 1))
    field = "\n".join(parts[j:])
    who = field[2:] if field.startswith("p:") else None
    return one, ("\n".join(parts[:i]), "\n".join(parts[i:j]), who)


@settings(max_examples=1000, deadline=None)
@given(pair=_pairs())
def test_different_tuples_never_share_a_mac_input_nor_cross_unwrap(
        pair: tuple[tuple[str, str, str | None], tuple[str, str, str | None]]) -> None:
    one, two = pair
    assume(one != two)
    (identity, upstream_id, who), (identity2, upstream_id2, who2) = one, two
    assert mac_input("k1", identity, upstream_id, _principal_field(who)) != mac_input(
        "k1", identity2, upstream_id2, _principal_field(who2))
    if not upstream_id or not upstream_id2:
        return
    task_id = relay(identity).wrap_id(CORE, req(who), upstream_id)
    refused(lambda: relay(identity2).unwrap_id(CORE, req(who2), forged(task_id, upstream_id2)))


def test_a_t1_id_from_an_older_replica_is_refused_as_unknown() -> None:
    # Exactly as the t1 code wrapped "task-1" for alice on "up-a" with key k1.
    key = CORE.server.state_policy.keyring.lookup("k1")
    message = "\n".join(("rondo-proxy-task", "k1", "up-a", "task-1", "p:alice"))
    t1 = ".".join(("t1", _b64(b"task-1"), "k1", _b64(bytes(key.mac(message.encode()))[:20])))
    refused(lambda: RELAY.unwrap_id(CORE, req("alice"), t1))
    assert RELAY.wrap_id(CORE, req("alice"), "task-1").startswith("t2.")


# -- long upstream ids ---------------------------------------------------------------------------

LONG_KID = [("K" * 32, b"k" * 32)]  # the longest key id a keyring takes


@settings(max_examples=200, deadline=None)
@given(upstream_id=st.text(min_size=1, max_size=MAX_UPSTREAM_ID).filter(
    lambda text: len(text.encode()) <= MAX_UPSTREAM_ID), who=_who)
def test_every_upstream_id_up_to_the_bound_round_trips_with_the_longest_key_id(
        upstream_id: str, who: str | None) -> None:
    keyed = core(LONG_KID)
    assert RELAY.unwrap_id(keyed, req(who), RELAY.wrap_id(keyed, req(who), upstream_id)) \
        == upstream_id


@pytest.mark.parametrize("upstream_id", ["x" * MAX_UPSTREAM_ID, "é" * (MAX_UPSTREAM_ID // 2)])
def test_an_upstream_id_of_exactly_the_bound_fills_512_characters_at_most(upstream_id: str) -> None:
    keyed = core(LONG_KID)
    task_id = RELAY.wrap_id(keyed, req("alice"), upstream_id)
    assert len(task_id) <= 512
    assert RELAY.unwrap_id(keyed, req("alice"), task_id) == upstream_id


@pytest.mark.parametrize("upstream_id", ["x" * (MAX_UPSTREAM_ID + 1), "x" * 400,
                                         "é" * (MAX_UPSTREAM_ID // 2) + "x"])
def test_an_upstream_id_past_the_bound_is_refused_at_wrap_not_orphaned(upstream_id: str) -> None:
    # Before: wrapped to an id longer than 512 characters that unwrap_id then refused.
    with pytest.raises(McpError, match=f"longer than {MAX_UPSTREAM_ID} bytes") as caught:
        RELAY.wrap_id(CORE, req("alice"), upstream_id)
    assert caught.value.code == -32603


class _Upstream:
    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.sent.append((method, params))
        return {}


def test_a_task_whose_id_cannot_be_wrapped_is_cancelled_upstream_and_the_call_fails() -> None:
    upstream = _Upstream()
    long_id = "x" * (MAX_UPSTREAM_ID + 1)
    task_relay = TaskRelay(SimpleNamespace(identity="up-a", client=upstream))  # type: ignore[arg-type]
    call = SimpleNamespace(who="alice", auth=None, env=SimpleNamespace(
        capabilities={"extensions": {"io.modelcontextprotocol/tasks": {}}}))

    async def call_next(_core: Any, _req: Any) -> dict[str, Any]:
        caught = _CATCH.get()
        assert isinstance(caught, _Caught)
        caught.task = {"taskId": long_id, "status": "working"}
        return {"content": [], "resultType": "complete"}

    with pytest.raises(McpError, match="longer than 336 bytes") as caught:
        asyncio.run(task_relay._tools_call(CORE, call, call_next))  # type: ignore[arg-type]
    assert caught.value.code == -32603
    assert upstream.sent == [("tasks/cancel", {"taskId": long_id})]
