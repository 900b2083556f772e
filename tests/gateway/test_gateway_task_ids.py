"""The proxy task id (`t1.<upstream id>.<key id>.<mac>`, gateway/tasks.py) as a parser: any
string either unwraps to the upstream id that was wrapped for this upstream, key and principal,
or is refused -32602 (never another exception); an id edited anywhere never unwraps."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rondo.gateway.tasks import NOT_FOUND, TaskRelay
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
    st.builds(lambda a, b, c: f"t1.{a}.{b}.{c}", st.text("-_=!.AaZz09+/\n é", max_size=30),
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
