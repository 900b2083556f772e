"""Issue 16 item 9: a full one-time store refuses new seals, never tokens already handed out."""

from __future__ import annotations

from typing import Any

import pytest

from rondo.state import MemoryReplayStore
from tests.helpers.helpers_core import ALL_CAPS, Client
from tests.helpers.once_flows import anonymous_flows, first_round, once_server


def test_a_flood_of_unfinished_flows_cannot_lock_out_tokens_already_issued() -> None:
    store = MemoryReplayStore(max_entries=50, max_per_principal=50)
    client = Client(once_server(store))
    early = first_round(client)["result"]  # a legitimate user, mid-flow
    # One anonymous client starts flows and never finishes them: the store fills up.
    refused = None
    for _ in range(100):
        response = first_round(client)
        if "error" in response:
            refused = response["error"]
            break
    assert refused is not None and refused["code"] == -32000 and "one-time" in refused["message"]
    assert len(store) == 50
    # Before: the early token was refused once the store was full. Now it still opens.
    done = client.call("tools/call", {"name": "pick", "arguments": {},
                                      "inputResponses": {"color": {"action": "accept", "content": {"c": "red"}}},
                                      "requestState": early["requestState"]}, caps=ALL_CAPS)
    assert done["result"]["content"][0]["text"] == "picked red"
    replayed = client.call("tools/call", {"name": "pick", "arguments": {},
                                          "inputResponses": {"color": {"action": "accept", "content": {"c": "red"}}},
                                          "requestState": early["requestState"]}, caps=ALL_CAPS)
    assert "error" in replayed  # one-time still means one time


def test_the_share_is_per_principal() -> None:
    clock = [0.0]
    store = MemoryReplayStore(max_entries=100, max_per_principal=3, clock=lambda: clock[0])
    assert all(store.reserve(f"a{i}", 60, "alice") for i in range(3))
    assert not store.reserve("a3", 60, "alice")
    assert store.reserve("b0", 60, "bob")
    assert store.consume("a0", 60) and not store.consume("a0", 60)
    clock[0] = 61
    assert store.reserve("a4", 60, "alice")  # expired places come back
    with pytest.raises(ValueError, match="max_per_principal"):
        MemoryReplayStore(max_per_principal=0)


def test_used_tokens_leave_the_principals_unopened_share() -> None:
    store = MemoryReplayStore(max_entries=100, max_per_principal=2)
    for i in range(20):  # a busy but honest client: every flow finishes
        assert store.reserve(f"t{i}", 60, None)
        assert store.consume(f"t{i}", 60)
    assert store.reserve("x", 60, None) and store.reserve("y", 60, None)
    assert not store.reserve("z", 60, None)  # two unfinished: its share is spent


def finish(client: Client, first: dict[str, Any]) -> dict[str, Any]:
    return client.call("tools/call", {"name": "pick", "arguments": {},
                                      "inputResponses": {"color": {"action": "accept", "content": {"c": "red"}}},
                                      "requestState": first["result"]["requestState"]}, caps=ALL_CAPS)


def test_one_clients_finished_flows_fill_its_own_quota_not_everyones() -> None:
    # Issue 37 item 13. Before: used entries went to a shared pool, so one client finishing
    # flows filled `max_entries` and every client was refused, "for this client".
    store = MemoryReplayStore(max_entries=100, max_per_principal=10, max_live_per_principal=20)
    server = once_server(store)
    alice, bob = Client(server, auth="alice"), Client(server, auth="bob")
    finished = 0
    refused = None
    for _ in range(100):
        first = first_round(alice)
        if "error" in first:
            refused = first["error"]
            break
        assert finish(alice, first)["result"]["content"][0]["text"] == "picked red"
        finished += 1
    assert finished == 20  # her places, sealed or used, until they expire
    assert refused is not None and refused["code"] == -32000
    assert "for this client" in refused["message"]
    # Bob is untouched by Alice's flows.
    first = first_round(bob)
    assert finish(bob, first)["result"]["content"][0]["text"] == "picked red"


def test_the_whole_store_is_the_last_resort_and_says_so() -> None:
    store = MemoryReplayStore(max_entries=5, max_per_principal=10, max_live_per_principal=20)
    server = once_server(store)
    for i in range(5):
        assert "result" in first_round(Client(server, auth=f"user{i}"))
    refused = first_round(Client(server, auth="late"))["error"]
    assert refused["code"] == -32000
    assert "on this server" in refused["message"] and "for this client" not in refused["message"]


def test_live_places_come_back_when_their_tokens_expire() -> None:
    clock = [0.0]
    store = MemoryReplayStore(max_entries=100, max_per_principal=5, max_live_per_principal=3,
                              clock=lambda: clock[0])
    for i in range(3):
        assert store.reserve(f"t{i}", 60, "alice") and store.consume(f"t{i}", 60)
    assert not store.reserve("t3", 60, "alice")
    assert store.refusal("alice").scope == "client"
    assert store.reserve("b", 60, "bob")
    assert store.refusal("bob").scope != "server"
    clock[0] = 61
    assert store.reserve("t3", 60, "alice")
    with pytest.raises(ValueError, match="max_live_per_principal"):
        MemoryReplayStore(max_live_per_principal=0)


@pytest.mark.parametrize("kind", ["def", "async def"])
def test_anonymous_http_clients_have_a_quota_each_by_address(kind: str) -> None:
    # Anonymous requests name no principal: over HTTP the client's address tells them apart,
    # so one anonymous client's flows do not lock out another's. (A plain `def` takes the
    # express lane, an `async def` the general one: both carry the address.)
    store = MemoryReplayStore(max_entries=100, max_per_principal=10, max_live_per_principal=2)
    one, two, three, other = anonymous_flows(store, kind)
    assert one["result"]["content"][0]["text"] == two["result"]["content"][0]["text"] == "picked red"
    assert three["error"]["code"] == -32000 and "for this client" in three["error"]["message"]
    assert other["result"]["content"][0]["text"] == "picked red"
