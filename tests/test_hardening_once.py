"""Issue 16 item 9: a full one-time store refuses new seals, never tokens already handed out."""

from __future__ import annotations

from typing import Any

import pytest

import rondo
from helpers_core import ALL_CAPS, Client
from rondo import elicit
from rondo.state import MemoryReplayStore, StatePolicy

COLOR = elicit.form("Color?", {"type": "object", "properties": {"c": {"type": "string"}}})


def once_server(store: MemoryReplayStore) -> rondo.Server:
    policy = StatePolicy(secret=b"k" * 32, once=True, replay_store=store)
    server = rondo.Server("once", state=policy)

    @server.tool
    def pick(ctx: rondo.Context) -> str:
        """Asks once."""
        answer = ctx.ask("color", COLOR)
        return f"picked {answer.content['c']}"

    return server


def first_round(client: Client) -> dict[str, Any]:
    return client.call("tools/call", {"name": "pick", "arguments": {}}, caps=ALL_CAPS)


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
    with pytest.raises(ValueError):
        MemoryReplayStore(max_per_principal=0)


def test_used_tokens_leave_the_principals_share() -> None:
    store = MemoryReplayStore(max_entries=100, max_per_principal=2)
    for i in range(20):  # a busy but honest client: every flow finishes
        assert store.reserve(f"t{i}", 60, None)
        assert store.consume(f"t{i}", 60)
    assert store.reserve("x", 60, None) and store.reserve("y", 60, None)
    assert not store.reserve("z", 60, None)  # two unfinished: its share is spent
